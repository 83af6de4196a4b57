"""Live subscriptions read through the Azure SDK, into the same ARM-shaped model as IaC."""
