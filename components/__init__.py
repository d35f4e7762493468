"""UI pieces of the workbench: each ``render_x(data, ...)`` draws one panel from core data.

No pipeline logic lives here: every number shown was computed by ``core``; these
modules only lay it out, and escape every document-derived string before it
reaches HTML.
"""
