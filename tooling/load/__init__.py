"""`livefreq load`: N concurrent pilots on WS /v1/radio replaying the corpus, and what they measure."""
