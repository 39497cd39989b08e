"""The report and what the notebooks call: its first screen (findings and glossary), its tables
and sections, the paper-scale section, the 2026-runtimes section, the dimensioning
experiment, and the papermill pipeline that renders HTML and PDF. The top wing."""
