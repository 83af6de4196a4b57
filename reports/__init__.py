"""Ways out: each module renders a `ScanResult` into bytes, deterministically."""
