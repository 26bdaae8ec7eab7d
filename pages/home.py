"""What servewise answers, and the layers of an LLM service it reasons about."""

import streamlit as st

st.title("servewise")
st.write("Choose an LLM inference engine and size it for your model and machine.")
