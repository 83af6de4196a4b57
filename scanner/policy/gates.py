"""The gate each command applies when neither the command line nor the config file sets one.

Kept apart from the pipeline so that the CLI can show the defaults in ``--help`` without
loading the engine.
"""

SCAN_GATE = "high"  # a scan fails on high and critical findings
DRIFT_GATE = "low"  # any drift fails, as `terraform plan -detailed-exitcode` does
