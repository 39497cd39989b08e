"""report.html and report.pdf from the executed report notebook: nbconvert's HTML with the
code hidden, each image's alt text from its caption, the print style sheet
(report_print.css) and stable ids, so that the same raw logs render to the same bytes; then
headless chromium prints the PDF. pipeline.run_notebooks calls it after papermill."""

from __future__ import annotations

from pathlib import Path

from serverbench.rawdata.columns import Col

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-pdf-header-footer",
)


class ChromiumNotFound(RuntimeError):
    """No chromium on PATH to print the report PDF with."""


def print_pdf(html_path, pdf_path, timeout_s: float = 120.0) -> Path:
    """report.html -> report.pdf with Debian's headless chromium (scripts/setup.sh installs
    it). Raises ChromiumNotFound when chromium is missing (a report.pdf already there is
    removed: it was printed from another HTML) and RuntimeError when it fails."""
    import shutil
    import subprocess
    import tempfile

    html_path, pdf_path = Path(html_path).resolve(), Path(pdf_path).resolve()
    pdf_path.unlink(missing_ok=True)
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise ChromiumNotFound(
            f"chromium not found: {html_path.name} is written ({html_path}), {pdf_path.name} is not; "
            "install Debian's 'chromium' (scripts/setup.sh does) or pass --no-pdf"
        )
    with tempfile.TemporaryDirectory(prefix="serverbench-chromium-") as profile_dir:
        cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile_dir}", f"--print-to-pdf={pdf_path}", html_path.as_uri()]
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s)
    if r.returncode != 0 or not pdf_path.exists():
        tail = (r.stderr or "").strip().splitlines()[-3:]
        raise RuntimeError(f"chromium could not print {html_path.name} (exit {r.returncode}): {' | '.join(tail)}")
    pdf_path.write_bytes(without_print_date(pdf_path.read_bytes()))
    return pdf_path


PRINT_DATE = b"19800101000000"  # the ZIP epoch, as reproducible builds date what has no date of its own


def without_print_date(pdf: bytes) -> bytes:
    """The PDF with its /CreationDate and /ModDate at PRINT_DATE: chromium stamps the moment
    it printed, the one thing that made the same HTML print to different bytes. The digits
    are replaced in place (same length), so the cross-reference offsets stay right."""
    import re

    return re.sub(rb"(/(?:CreationDate|ModDate) \(D:)\d{14}", lambda m: m.group(1) + PRINT_DATE, pdf)


def _number_styler_ids(html: str) -> str:
    """Replace each pandas Styler uuid (T_xxxxx) by T_tN in order of first appearance."""
    import re

    seen: dict[str, str] = {}

    def sub(m):
        return seen.setdefault(m.group(1), f"T_t{len(seen)}")

    return re.sub(r"\b(T_[0-9a-f]{5})(?=[_\"\s])", sub, html)


PRINT_CSS = Path(__file__).with_name("report_print.css")


def with_print_style(html: str) -> str:
    """The page with report_print.css (page size, margins, tables that fit the page) as the
    last style sheet of its <head>, so that its rules win over nbconvert's."""
    css = PRINT_CSS.read_text(encoding="utf-8")
    head_end = html.find("</head>")
    if head_end < 0:
        raise ValueError("no </head> in the rendered report")
    return html[:head_end] + f'<style id="serverbench-print">\n{css}</style>\n' + html[head_end:]


def first_heading(nb) -> str | None:
    """The text of the first level-1 Markdown heading the notebook displays (an output's
    text/markdown or a Markdown cell), or None."""
    import re

    for cell in nb.cells:
        texts = [cell.source] if cell.cell_type == "markdown" else []
        texts += [o.get("data", {}).get("text/markdown", "") for o in cell.get("outputs", [])]
        for t in texts:
            m = re.search(r"^# (.+)$", "".join(t), flags=re.M)
            if m:
                return m.group(1).strip()
    return None


NO_ALT = "No description has been provided for this image"  # nbconvert's alt for an image without one


def describe_images(html: str) -> str:
    """Each image's alt text from the caption shown just before it: the nearest preceding
    bold line or heading (notebook.show_figure and the figure sections display one), instead
    of nbconvert's "No description has been provided for this image"."""
    import html as html_mod
    import re

    caption = re.compile(r"<(strong|h[1-4])\b[^>]*>(.*?)</\1>", flags=re.S)
    out, last = [], 0
    for m in re.finditer(r'alt="' + re.escape(NO_ALT) + '"', html):
        before = list(caption.finditer(html, 0, m.start()))
        text = ""
        if before:
            text = re.sub(r"<[^>]+>", "", before[-1].group(2))
            text = " ".join(html_mod.unescape(text).replace("\u00b6", "").split())
        out.append(html[last : m.start()])
        out.append(f'alt="{html_mod.escape(text or "figure", quote=True)}"')
        last = m.end()
    out.append(html[last:])
    return "".join(out)


def render_html(notebook, html_path) -> Path:
    """nbconvert to HTML with every code cell's input hidden (as `--no-input`), and the print
    style sheet (report_print.css) that chromium uses for report.pdf."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)
    # Cell ids (papermill's injected cell) and pandas Styler table ids are random per
    # execution; numbering them makes the same raw logs render to the same bytes.
    for i, cell in enumerate(nb.cells):
        cell[Col.id] = f"cell-{i}"
    title = first_heading(nb)
    if title:  # the page's <title>: a sub-report's own subject, not the notebook's fixed one
        nb.metadata["title"] = title
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    body = with_print_style(_number_styler_ids(describe_images(body)))
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(body, encoding="utf-8")
    return html_path
