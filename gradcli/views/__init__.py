"""Views: pure functions from results to rich renderables or text (tables, trees, reports, DOT).

They compute nothing and print nothing; the commands decide where their output goes.
"""
