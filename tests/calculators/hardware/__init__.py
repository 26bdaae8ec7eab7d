"""Tests for the matching part of the tree."""
