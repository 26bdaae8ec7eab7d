"""Small Streamlit apps the browser tests serve on their own."""
