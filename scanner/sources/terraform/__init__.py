"""Terraform plan JSON (``terraform show -json``) translated into ARM-shaped resources."""
