"""File uploaders in a real browser: a Spanish page shows the uploader's button and limit in Spanish, with the
limit Streamlit enforces; an English page shows Streamlit's own texts; uploading still works in Spanish."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import open_page, wait_for_app

pytestmark = pytest.mark.browser

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"

#: What the reader sees of one uploader: each text's own words and size, and what its style draws after it.
SEEN_JS = """
key => {
  const box = document.querySelector(`.st-key-${key} [data-testid="stFileUploader"]`);
  const seen = element => {
    const own = getComputedStyle(element), after = getComputedStyle(element, '::after');
    return {text: element.textContent, size: own.fontSize, after: after.content, afterSize: after.fontSize};
  };
  return {
    button: seen(box.querySelector('[data-testid="stBaseButton-secondary"] p')),
    limit: seen(box.querySelector('[data-testid="stFileUploaderDropzoneInstructions"] span')),
    // room between the log's text area and the uploader under it (check_log)
    gap: box.getBoundingClientRect().top
      - document.querySelector('[data-testid="stTextArea"]').getBoundingClientRect().bottom,
  };
}
"""


def _seen(page, key: str) -> dict:
    return page.evaluate(SEEN_JS, key)


@pytest.mark.parametrize(("path", "key", "limit"), [
    ("check_log", "log_file", '"Hasta 2\u00a0MB por archivo"'),  # .streamlit/config.toml: maxUploadSize = 2
    ("simulator", "sim_csv_file", '"Hasta 2\u00a0MB por archivo • CSV"'),
])
def test_a_spanish_uploader_reads_spanish_with_the_real_limit(app_url, page, path, key, limit):
    open_page(page, f"{app_url}/{path}?lang=es")
    seen = _seen(page, key)
    # Streamlit's English is still in the page but drawn at size 0; ours is drawn at Streamlit's own 14 px
    assert seen["button"]["text"] == "Upload" and seen["button"]["size"] == "0px"
    assert seen["button"]["after"] == '"Subir archivo"' and seen["button"]["afterSize"] == "14px"
    assert seen["limit"]["text"].startswith("2MB per file") and seen["limit"]["size"] == "0px"
    assert seen["limit"]["after"] == limit and seen["limit"]["afterSize"] == "14px"


#: Holds a file over one uploader's box (the drag events react-dropzone listens to) and reads the note drawn then.
DRAG_JS = """
key => {
  const zone = document.querySelector(`.st-key-${key} [data-testid="stFileUploaderDropzone"]`);
  const data = new DataTransfer();
  data.items.add(new File(["x"], "a.log", {type: "text/plain"}));
  for (const kind of ["dragenter", "dragover"]) {
    zone.dispatchEvent(new DragEvent(kind, {bubbles: true, cancelable: true, dataTransfer: data}));
  }
}
"""
DRAG_SEEN_JS = """
key => {
  const zone = document.querySelector(`.st-key-${key} [data-testid="stFileUploaderDropzone"]`);
  const note = [...zone.querySelectorAll("span")].find(s => s.textContent.startsWith("Drag and drop"));
  if (!note) return null;
  const own = getComputedStyle(note), after = getComputedStyle(note, "::after");
  return {text: note.textContent, size: own.fontSize, after: after.content, afterSize: after.fontSize};
}
"""


@pytest.mark.parametrize(("lang", "after", "size"), [("es", '"Suelta el archivo aquí"', "0px"), ("en", "none", "14px")])
def test_a_file_held_over_the_box_gets_a_note_in_the_readers_language(app_url, page, lang, after, size):
    open_page(page, f"{app_url}/check_log?lang={lang}")
    page.evaluate(DRAG_JS, "log_file")
    seen = page.wait_for_function(DRAG_SEEN_JS, arg="log_file").json_value()  # drawn once React has re-rendered
    assert seen["text"] == "Drag and drop a file here" and seen["size"] == size
    assert seen["after"] == after and (lang == "en" or seen["afterSize"] == "14px")


def test_an_english_uploader_keeps_streamlits_texts_and_its_place(app_url, page):
    open_page(page, f"{app_url}/check_log?lang=en")
    english = _seen(page, "log_file")
    assert english["button"] == {"text": "Upload", "size": "14px", "after": "none", "afterSize": "14px"}
    assert english["limit"]["text"] == "2MB per file" and english["limit"]["after"] == "none"
    open_page(page, f"{app_url}/check_log?lang=es")
    # the style's own element takes no room: the uploader sits as far below the text area as on the English page
    assert _seen(page, "log_file")["gap"] == english["gap"]


def test_uploading_a_log_on_the_spanish_page_reads_it(app_url, page):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/check_log?lang=es")
    upload = page.locator('.st-key-log_file [data-testid="stFileUploaderDropzoneInput"]')
    upload.set_input_files(str(LOGS / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log"))
    wait_for_app(page)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="exacta")).to_contain_text("24")
    assert page.locator('[data-testid="stException"]').count() == 0
