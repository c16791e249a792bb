"""report.html reads on a laptop (1400 px) and a phone (400 px) in Debian's chromium: nothing runs off the right edge
except inside a box that scrolls (tables, charts, code), the page itself never scrolls sideways, and chart text
is never smaller than 10 CSS px. A screenshot at each width is kept beside the test's temporary files."""

from __future__ import annotations

from pathlib import Path

import pytest

# every element whose right edge passes the viewport's, unless an ancestor scrolls sideways (a table's or a
# chart's box); and the rendered size of every chart's text: its font size times the SVG's scale on screen
MEASURE = """() => {
  const W = document.documentElement.clientWidth;
  const inScroller = el => { for (let a = el.parentElement; a; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
  const wide = [...document.body.querySelectorAll('*')].filter(el => {
    const r = el.getBoundingClientRect(); return r.width > 0 && r.right > W + 1 && !inScroller(el); })
    .map(el => `${el.tagName.toLowerCase()}.${el.className} ${Math.round(el.getBoundingClientRect().right)}px`);
  const fonts = [...document.querySelectorAll('figure svg text')].map(t => {
    const m = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); });
  return {W, pageWidth: document.documentElement.scrollWidth, wide: wide.slice(0, 10), fonts};
}"""


@pytest.mark.parametrize("width", [1400, 400])
def test_report_fits_the_screen_and_its_charts_are_legible(
    browser: object, reported_wh: Path, tmp_path: Path, width: int
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto((reported_wh.parent / "r" / "report.html").as_uri())
    got = page.evaluate(MEASURE)
    page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=False)
    page.close()
    assert got["W"] == width and got["pageWidth"] == width, got["wide"]  # the page never scrolls sideways
    assert got["wide"] == []
    assert len(got["fonts"]) > 50 and min(got["fonts"]) >= 9.9, sorted(got["fonts"])[:5]


def test_a_wide_table_scrolls_inside_its_box_on_a_phone(browser: object, reported_wh: Path) -> None:
    page = browser.new_page(viewport={"width": 400, "height": 900})
    page.goto((reported_wh.parent / "r" / "report.html").as_uri())
    boxes = page.evaluate("""() => [...document.querySelectorAll('div.tw')].map(d => ({
        box: d.getBoundingClientRect().right, table: d.firstElementChild.scrollWidth, client: d.clientWidth,
        overflow: getComputedStyle(d).overflowX}))""")
    page.close()
    wide = [b for b in boxes if b["table"] > b["client"]]
    assert wide, "some table is wider than a phone"
    assert all(b["box"] <= 400 and b["overflow"] == "auto" for b in boxes)


def test_the_not_in_use_lines_show_code_not_backticks(browser: object, reported_wh: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((reported_wh.parent / "r" / "report.html").as_uri())
    items = page.evaluate(
        "() => [...document.querySelectorAll('ul.norms li')].map(li => [li.innerText, "
        "li.querySelectorAll('code').length])"
    )
    page.close()
    assert items and any(n for _, n in items)
    assert not [text for text, _ in items if "`" in text]
