"""Helpers shared by tests: model factories, log helpers, page discovery, browser driving."""
