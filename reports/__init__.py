"""Ways out: each module renders a `ScanResult` into bytes, deterministically."""

# The smallest markdown report azai cuts to: room for the counts and the last line, whatever the
# scan found. Here, not in `reports.markdown`, so that checking ``--max-bytes`` as the command
# line is read does not import the markdown renderer (and what it imports) for every report.
MIN_MAX_BYTES = 4_096
