# In a checkout the package is not installed: its fixtures are named here (installed, its entry point registers them).
pytest_plugins = ["speech_emulator.pytest_plugin"]
