"""Tooling around the gateway: benchmarks, the load tester and its corpus, scripted pilots, the
terminal trainer and the `livefreq` command line.

It drives the serving packages (engine, gateway, assistant) from outside, the way a user or an
operator would; they never import it (tests/test_import_rules_tooling.py checks that), so an
installation that only serves does not carry the benchmarks' weight.
"""
