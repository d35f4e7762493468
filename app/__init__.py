"""The Streamlit workbench: pages and the wiring they share (no pipeline logic)."""
