"""The pure functions of the page's teaching and user-expectation modules, as tables in the real browser
(the `js` fixture of conftest.py imports each module from the live server): Markdown and its link
rule, the View menu's URL, where a URL points, embed snippets, the run history and its comparison,
lane names and where the simulator serialised SparseCore and TensorCore work."""

from __future__ import annotations

import pytest

# -- markdown.js: safeHref, renderMarkdown ----------------------------------------------------

BASE = "https://playground.example/l/AAAAAAAAAAA?step=2"
SAFE_HREF = {
    "https": ("https://docs.jax.dev/en/latest/pallas/", "https://docs.jax.dev/en/latest/pallas/"),
    "http, trimmed": ("  http://example.com/a  ", "http://example.com/a"),
    "scheme in capitals, normalised": ("HTTPS://Example.COM", "https://example.com/"),
    "a path on this site": ("/s/AAAAAAAAAAA", "/s/AAAAAAAAAAA"),
    "a relative path, resolved": ("../tiled_matmul/README.md", "/tiled_matmul/README.md"),
    "a fragment stays on this page": ("#blockspec", "/l/AAAAAAAAAAA?step=2#blockspec"),
    "mail is not a web link": ("mailto:teacher@example.edu", None),
    "javascript": ("javascript:alert(1)", None),
    "javascript, mixed case and padded": ("  JavaScript:alert(1)", None),
    "javascript behind a control character": ("\x01javascript:alert(1)", None),
    "javascript with a tab inside": ("java\tscript:alert(1)", None),
    "data": ("data:text/html,<script>alert(1)</script>", None),
    "vbscript": ("vbscript:msgbox(1)", None),
    "file": ("file:///etc/passwd", None),
    "protocol-relative": ("//evil.example/x", None),
    "a backslash path that leaves the site": ("/\\evil.example/", None),
    "two backslashes": ("\\\\evil.example/x", None),
}


@pytest.mark.parametrize("url, expected", SAFE_HREF.values(), ids=list(SAFE_HREF))
def test_safe_href(js, url, expected):
    assert js("markdown.js", "return m.safeHref(arg.url, arg.base);", {"url": url, "base": BASE}) == expected


def rendered(js, text: str) -> dict:
    return js(
        "markdown.js",
        """
        await m.markdownReady();  // the renderer is loaded on first use; then it renders at once
        const root = document.createElement("div");
        root.append(m.renderMarkdown(arg.text, { base: arg.base }));
        return { links: [...root.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href"), a.rel, a.target]),
                 tags: [...root.querySelectorAll("*")].map((el) => el.localName),
                 text: root.textContent };
        """,
        {"text": text, "base": BASE},
    )


# What a reader can follow: the hrefs of the rendered links (a refused link stays its text).
MARKDOWN_LINKS = {
    "a web link": ("[docs](https://docs.jax.dev/)", ["https://docs.jax.dev/"]),
    "a control character before javascript:": ("[x](\x01javascript:alert(1))", []),
    # markdown-it percent-encodes the backslash: a path on this site, not a way off it.
    "a backslash path stays on the site": ("[x](/\\evil.example/)", ["/%5Cevil.example/"]),
    "javascript: spelt with an entity": ("[x](&#x6A;avascript:alert(1))", []),
    "slashes spelt with entities": ("[x](&#47;&#47;evil.example/)", []),
    "a path on this site": ("[step 3](/l/AAAAAAAAAAA?step=3)", ["/l/AAAAAAAAAAA?step=3"]),
    "an autolink to javascript:": ("<javascript:alert(1)>", []),
}


@pytest.mark.parametrize("text, hrefs", MARKDOWN_LINKS.values(), ids=list(MARKDOWN_LINKS))
def test_markdown_links_follow_the_rule(js, text, hrefs):
    out = rendered(js, text)
    assert [link[1] for link in out["links"] if link[1] is not None] == hrefs
    for _, href, rel, target in out["links"]:
        assert (rel, target) == (("noopener noreferrer", "_blank") if href else ("", ""))
    assert (
        "x" in out["text"] or "step 3" in out["text"] or "docs" in out["text"] or "javascript" in out["text"]
    )


def test_markdown_shows_html_as_text_and_drops_images(js):
    out = rendered(
        js,
        "# Title\n\n<img src=x onerror=alert(1)><script>alert(2)</script>\n\n![cat](https://x.example/cat.png) **bold** `code`",
    )
    assert out["tags"][0] == "h3"
    assert "img" not in out["tags"] and "script" not in out["tags"]
    assert "<img src=x onerror=alert(1)>" in out["text"]
    assert {"strong", "code"} <= set(out["tags"])


# -- view.js: the view in the URL ----------------------------------------------------------------

VIEWS = {
    "nothing asked": ("", {}, {"present": False, "hidden": [], "size": 100, "wrap": False}),
    "presentation defaults": ("?present=1", {}, {"present": True, "hidden": [], "size": 140, "wrap": True}),
    "presentation, sized and unwrapped": (
        "?present=1&size=160&wrap=0",
        {},
        {"present": True, "hidden": [], "size": 160, "wrap": False},
    ),
    "panels by name, unknown ones ignored": (
        "?hide=IR,trace,bogus",
        {},
        {"present": False, "hidden": ["trace", "ir"], "size": 100, "wrap": False},
    ),
    "the browser's own size and wrap": (
        "?entry=x",
        {"size": 120, "wrap": True},
        {"present": False, "hidden": [], "size": 120, "wrap": True},
    ),
    "a size not on the scale is not taken": (
        "?size=1000",
        {},
        {"present": False, "hidden": [], "size": 100, "wrap": False},
    ),
}


@pytest.mark.parametrize("search, remembered, view", VIEWS.values(), ids=list(VIEWS))
def test_view_from_search(js, search, remembered, view):
    assert (
        js(
            "view.js",
            "return m.viewFromSearch(arg.search, arg.remembered);",
            {"search": search, "remembered": remembered},
        )
        == view
    )


SEARCHES = {
    "defaults leave the URL alone": (
        "?entry=tiled_matmul",
        {"present": False, "hidden": [], "size": 100, "wrap": False},
        "?entry=tiled_matmul",
    ),
    "presentation keeps other parameters": (
        "?step=2",
        {"present": True, "hidden": ["ir"], "size": 140, "wrap": True},
        "?step=2&present=1&hide=ir",
    ),
    "a size and no wrap": (
        "",
        {"present": True, "hidden": [], "size": 150, "wrap": False},
        "?present=1&size=150&wrap=0",
    ),
    "old view parameters are replaced": (
        "?present=1&size=200&x=1",
        {"present": False, "hidden": [], "size": 100, "wrap": True},
        "?x=1&wrap=1",
    ),
}


@pytest.mark.parametrize("search, view, expected", SEARCHES.values(), ids=list(SEARCHES))
def test_search_with_view(js, search, view, expected):
    assert (
        js("view.js", "return m.searchWithView(arg.search, arg.view);", {"search": search, "view": view})
        == expected
    )


def test_text_size_steps_stay_on_the_scale(js):
    steps = js(
        "view.js",
        "return [m.nextSize(100, 1), m.nextSize(140, -1), m.nextSize(200, 1), m.nextSize(80, -1), m.nextSize(97, 1)];",
    )
    assert steps == [110, 130, 200, 80, 110]


# -- places.js: what a URL points at ----------------------------------------------------------------

PLACES = {
    "a share": ("/s/AbC_123-xyz", "", {"kind": "share", "id": "AbC_123-xyz"}),
    "a lesson's latest revision": (
        "/l/L3ss0n",
        "?step=3",
        {"kind": "lesson", "id": "L3ss0n", "revision": None, "step": 3},
    ),
    "a pinned revision": (
        "/l/L3ss0n",
        "?rev=2",
        {"kind": "lesson", "id": "L3ss0n", "revision": 2, "step": 1},
    ),
    "nonsense numbers": (
        "/l/L3ss0n",
        "?rev=-1&step=x",
        {"kind": "lesson", "id": "L3ss0n", "revision": None, "step": 1},
    ),
    "an entry": ("/", "?entry=ring_all_gather&present=1", {"kind": "entry", "slug": "ring_all_gather"}),
    "scratch": ("/", "?scratch", {"kind": "scratch"}),
    "a bad escape is kept as written": ("/s/%E0%A4%A", "", {"kind": "share", "id": "%E0%A4%A"}),
}


@pytest.mark.parametrize("path, search, place", PLACES.values(), ids=list(PLACES))
def test_place_of(js, path, search, place):
    assert (
        js("places.js", "return m.placeOf(arg.path, arg.search);", {"path": path, "search": search}) == place
    )


# -- links.js, files.js, builder.js --------------------------------------------------------------


def test_embed_snippets(js):
    snippets = js(
        "links.js",
        """return [
          m.embedSnippet({ kind: "share", id: "AbC", origin: "https://pp.example" }),
          m.embedSnippet({ kind: "lesson", id: "L/1", origin: "https://pp.example", readOnly: true, title: 'Week "1" <b>' }),
        ];""",
    )
    assert snippets[0] == (
        '<iframe src="https://pp.example/embed/AbC" title="Pallas Playground kernel" width="100%" height="520" '
        'loading="lazy" style="border:1px solid #ccc;border-radius:6px"></iframe>'
    )
    assert 'src="https://pp.example/embed/l/L%2F1?readonly=1"' in snippets[1]
    assert 'title="Week &quot;1&quot; &lt;b>"' in snippets[1] and 'height="640"' in snippets[1]


def test_file_names_and_moving_steps(js):
    assert js("files.js", "return [m.fileName('tiled_matmul'), m.fileName(null), m.fileName('../x y')];") == [
        "tiled_matmul.py",
        "kernel.py",
        "x_y.py",
    ]
    assert js(
        "builder.js",
        "return [m.moved([0, 1, 2, 3], 3, 0), m.moved([0, 1, 2, 3], 0, 2), m.moved([0, 1], 1, 9)];",
    ) == [
        [3, 0, 1, 2],
        [1, 2, 0, 3],
        [0, 1],
    ]


# -- history.js: kept, capped, compared ------------------------------------------------------------


def record(at: int, status: str, median: float | None, error: dict | None = None) -> dict:
    timing = {"kernel": {"median": median}, "first_call_seconds": 0.5} if median is not None else None
    result = {
        "status": status,
        "summary": status,
        "timing": timing,
        "error": error,
        "cases": [{"passed": status == "passed"}],
    }
    return {"at": at, "entry": "tiled_matmul", "chip": "v5p", "source": "a\nb\n", "result": result}


def test_history_keeps_results_without_their_bulk_and_caps_the_list(js):
    trimmed = js(
        "history.js",
        """return m.trimForHistory({ status: "ran", trace: { events: [1] }, lowerings: [1],
            lowering: { lowers: true, mosaic: "x".repeat(9), jaxpr: "y" }, stdout: "z".repeat(5000) });""",
    )
    assert "trace" not in trimmed and "lowerings" not in trimmed and trimmed["lowering"] == {"lowers": True}
    assert len(trimmed["stdout"]) == 2000 and trimmed["stdout_truncated"] is True
    capped = js(
        "history.js",
        "return m.capHistory(arg.map((n) => ({ n, pad: 'p'.repeat(100) })), { max: 5, maxBytes: 400 }).map((r) => r.n);",
        list(range(9)),
    )
    assert capped == [0, 1, 2], "newest first; the oldest go when over the count or the size"


def test_history_with_one_run_shows_no_null(js):
    text = js(
        "history.js",
        """const root = document.createElement("div"); const kept = JSON.stringify([{ id: "r1", ...arg }]);
        new m.RunHistory(root, { storage: { get: () => kept, set: () => {} }, onOpen: () => {} });
        return root.textContent;""",
        record(1, "passed", 0.002),
    )
    assert "Forget these runs" in text and "null" not in text


def test_compare_rows_show_what_differs(js):
    rows = js(
        "history.js",
        "return m.compareRows(arg.a, arg.b);",
        {
            "a": record(1, "passed", 0.002),
            "b": record(2, "error", None, {"type": "ValueError", "message": "bad"}),
        },
    )
    table = {label: (left, right, differ) for label, left, right, differ in rows}
    assert table["Status"] == ("passed", "error", True)
    assert table["Error"] == ("—", "ValueError: bad", True)
    assert table["Kernel (median)"] == ("2 ms", "—", True)
    assert table["Cases passed"] == ("1 of 1", "0 of 1", True)
    assert table["Chip"] == ("v5p", "v5p", False)


# -- timeline.js and trace.js: cores by kind ---------------------------------------------------------

LANE_NAMES = {
    "a TensorCore, one device": ({"device": 0, "core": 1, "core_kind": "tensor_core"}, 1, "TensorCore 1"),
    "a SparseCore, four devices": (
        {"device": 2, "core": 0, "core_kind": "sparse_core"},
        4,
        "device 2 · SparseCore 0",
    ),
    "no kind said: a TensorCore": ({"device": 1, "core": 0}, 2, "device 1 · TensorCore 0"),
    "no core: the device": ({"device": 3, "core": None}, 4, "device 3"),
}


@pytest.mark.parametrize("lane, devices, name", LANE_NAMES.values(), ids=list(LANE_NAMES))
def test_lane_names(js, lane, devices, name):
    assert (
        js("timeline.js", "return m.laneName(arg.lane, arg.devices);", {"lane": lane, "devices": devices})
        == name
    )


def event(
    t: float, kind: str, core_kind: str, device: int = 0, core: int | None = 0, label: str = ""
) -> dict:
    return {
        "t": t,
        "kind": kind,
        "core_kind": core_kind,
        "device": device,
        "core": core,
        "label": label,
        "dur": 0,
    }


def test_core_kind_spans_tell_serialised_from_overlapped(js):
    events = [
        event(1.0, "kernel_start", "sparse_core", core=None, label="gather"),
        event(1.1, "dma_start", "sparse_core"),
        event(1.5, "dma_wait", "sparse_core"),
        event(2.0, "kernel_start", "tensor_core", core=None, label="matmul"),
        event(2.1, "dma_start", "tensor_core"),
        event(2.9, "dma_wait", "tensor_core"),
        event(1.2, "dma_start", "sparse_core", device=1),
        event(1.3, "dma_start", "tensor_core", device=1),
        event(1.6, "dma_wait", "sparse_core", device=1),
    ]
    spans = js("trace.js", "return m.coreKindSpans({ events: arg });", events)
    assert [(s["device"], s["overlapped"]) for s in spans] == [(0, False), (1, True)]
    first = spans[0]
    assert first["sparse"] == {"kernel": "gather", "start": pytest.approx(0.1), "end": pytest.approx(0.5)}
    assert first["tensor"]["kernel"] == "matmul" and first["tensor"]["start"] == pytest.approx(1.1)
