"""ARM templates (including compiled Bicep) and ARM what-if results."""
