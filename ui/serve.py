"""Start the app the way `make run` does: `streamlit run app.py`, with app.py's navigation from the first visit.

Streamlit still treats a `pages/` folder next to the entry script as a legacy multipage app until the
entry script has called `st.navigation` once. Until then, a shared link such as `/formats?...` opened on
a freshly started server runs that page on its own (no sidebar of our pages, no page config). The
flag below is the one `st.navigation` itself clears; clearing it before the server starts makes every
request go through app.py.
"""

import sys

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli


def main() -> None:
    """Run `streamlit run app.py` with any extra command-line options passed through."""
    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
