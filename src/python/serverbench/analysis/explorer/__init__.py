"""Exploring raw sweeps side by side (notebooks/explore.ipynb and the teaching labs): the
comparison views, their widgets and the figures for looking rather than reading."""
