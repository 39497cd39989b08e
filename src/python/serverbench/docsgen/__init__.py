"""The docs generators: every generated block of README and docs/, and the schemas' lists
that spec/cli.json owns (`python -m serverbench docs`)."""
