"""`livefreq bench`: engine throughput, the voice path, the router, readback safety and the
briefing assistant, each measured in a module of its own with a JSON report."""
