"""azai: audit AI workloads on Azure, in IaC before deploy and in live subscriptions.

The package is split by direction of data flow: ``scanner.sources`` turn inputs into one
ARM-shaped model, ``checks`` evaluate that model, ``reports`` render the results.
"""

__version__ = "0.1.0"
# Where the project lives (project.urls in pyproject.toml): README and rule-page links are
# absolute, so they work on a package page too.
REPOSITORY = "https://github.com/azai-audit/azai"
RULE_PAGES = f"{REPOSITORY}/blob/main/docs/rules/"
