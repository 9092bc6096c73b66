"""Collection for the whole suite."""

#: tests/data holds inputs, among them the demo plugin package with its own tests: those run
#: against the installed package, in a subprocess of tests/plugins/test_manager.py, not here
collect_ignore = ["data"]
