"""Thin scikit-learn estimators: validate → build problem → call solver → report."""
