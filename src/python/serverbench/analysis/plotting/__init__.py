"""Figures drawn like the paper's, their shared style (one colour and marker per language, from
spec/cli.json), and the forest plot of every verdict's decision."""
