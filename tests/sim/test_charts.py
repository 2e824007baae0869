"""Every chart kind packsched draws (issue 21: one chart builder, packsched.sim.chartspec), looked at as a reader
sees it: rendered by vl-convert (SVG and PNG: what replay, compare and tune write) and drawn by the HTML report in
headless chromium. Each chart has its title and axis titles with their unit; count axes tick whole numbers; legends
sit under the plot, never over the data; the same input gives the same PNG. And the fixes of issue 21: packsched's
median is drawn over the dashed published mean; one colour means one thing on a page (a policy keeps its colour
from the curves to the bars); each scenario step has its own place on the x axis; a node a step adds has no
utilisation before it; the end state has a column of its own and room before the right edge; the tune page shows
the search, the trials and the whole best configuration.

The pages are made by the commands themselves, on the repository's examples and a small synthetic trace."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import vl_convert
from typer.testing import CliRunner

from browser_pages import load, screenshot
from helpers import write_small_trace
from packsched.cli.main import app
from packsched.sim import chartspec

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
NS = "{http://www.w3.org/2000/svg}"
KINDS = {"line", "bars", "heatmap", "timeline"}
DURATION = re.compile(r"^(\d+h)?(\d+m)?\d+(\.\d+)?s$")
UNIT = re.compile(r"\(.+\)$")  # "GPU allocation ratio (%)", "pods (count)", "cpu (cores)", "trial (number)"
runner = CliRunner()

SPACE = """apiVersion: packsched.io/v1alpha1
kind: TuneSpace
metadata: {name: small}
spec:
  strategies: [LeastAllocated, MostAllocated]
  resources:
  - {name: cpu, weight: {min: 0, max: 3}}
  - {name: alibabacloud.com/gpu-milli, weight: 1}
  scorePlugins:
  - {name: NodeResourcesFit, weight: {min: 1, max: 3}}
  - {name: NodeResourcesBalancedAllocation, weight: {min: 0, max: 2}}
  percentageOfNodesToScore: {min: 50, max: 100}
"""


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A page per command with charts, made by the command."""
    out = tmp_path_factory.mktemp("pages")
    trace = write_small_trace(out / "trace", published_fgd=True)
    demo = EX / "gpu-demo"
    invoke("simulate", str(EX / "timeline"), "--html", str(out / "simulate.html"))
    cap = EX / "capacity-scheduling-demo"
    invoke("simulate", str(cap), "--config", str(cap / "config.yaml"), "--html", str(out / "quotas-over-time.html"))
    invoke("run", str(EX / "what-if" / "scenario.yaml"), "--html", str(out / "run.html"))
    configs = [
        "--config",
        str(demo / "config-least-allocated.yaml"),
        "--config",
        str(demo / "config-rtcr-binpack.yaml"),
    ]
    invoke("compare", str(demo), *configs, "--html", str(out / "whatif.html"))
    invoke(
        "compare", str(trace), "--policies", "FGD,BestFit,Random", "--seeds", "1-2", "--workers", "1",
        "--html", str(out / "compare.html"),
    )  # fmt: skip
    two = EX / "docs-two-node"
    (out / "explain.json").write_text(
        invoke("explain", str(two / "cluster.yaml"), "--pod", "default/incoming", "--config", str(two / "config.yaml"),
               "-o", "json"),
        encoding="utf-8",
    )  # fmt: skip
    invoke("report", str(out / "explain.json"))
    quotas = EX / "gpu-quotas"
    text = invoke("quotas", str(quotas), "--config", str(quotas / "config-spread.yaml"), "-o", "json")
    (out / "quotas.json").write_text(text, encoding="utf-8")
    invoke("report", str(out / "quotas.json"))
    (out / "demo.json").write_text(invoke("demo", str(demo), "-o", "json"), encoding="utf-8")
    invoke("report", str(out / "demo.json"))
    (out / "space.yaml").write_text(SPACE, encoding="utf-8")
    tune_args = ["--space", str(out / "space.yaml"), "--trials", "4", "--seeds", "1-2", "--holdout-seeds", "3"]
    tune_args += ["--workers", "1", "--out-dir", str(out / "tune"), "-o", "json"]
    invoke("tune", str(trace), *tune_args, "--html", str(out / "tune.html"))
    return {p.stem: p for p in out.glob("*.html")}


def embedded(page: Path) -> dict[str, Any]:
    text = page.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="packsched-data">(.*?)</script>', text, re.S)
    assert m is not None
    model: dict[str, Any] = json.loads(m.group(1))
    return model


def charts_of(page: Path) -> list[dict[str, Any]]:
    """The page's charts: ``kind`` and ``spec`` (Vega-Lite)."""
    return [c for s in embedded(page)["sections"] if s["type"] == "charts" for c in s["charts"]]


def title(spec: dict[str, Any]) -> str:
    return str(spec["title"]["text"])


def chart(pages: dict[str, Path], page: str, name: str) -> dict[str, Any]:
    return next(c["spec"] for c in charts_of(pages[page]) if title(c["spec"]) == name)


def every_chart(pages: dict[str, Path]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for name, page in sorted(pages.items()):
        for c in charts_of(page):
            yield name, c["kind"], c["spec"]


# -- the rendered SVG --------------------------------------------------------------------------------------------


class Axis:
    def __init__(self, g: ET.Element) -> None:
        label = g.get("aria-label") or ""
        self.orient = label[0]  # X or Y
        m = re.match(r"[XY]-axis titled '(.*)' for a", label)
        self.title = m.group(1) if m else None
        self.linear = "linear scale" in label
        self.ticks = [t.text or "" for t in _texts(g, "role-axis-label")]


def _texts(root: ET.Element, role: str) -> list[ET.Element]:
    return [t for g in root.iter(NS + "g") if role in (g.get("class") or "").split() for t in g.iter(NS + "text")]


class Rendered:
    """A specification rendered to SVG by vl-convert: its title, axes, legend titles."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.svg = chartspec.to_svg(spec)
        root = ET.fromstring(self.svg)
        self.title = [t.text for t in _texts(root, "role-title-text")]
        self.axes = [Axis(g) for g in root.iter(NS + "g") if g.get("aria-roledescription") == "axis"]
        self.legends = [t.text for t in _texts(root, "role-legend-title")]
        self.marks = [g.get("class", "") for g in root.iter(NS + "g") if "role-mark" in (g.get("class") or "")]


def count_axes(spec: dict[str, Any]) -> set[str]:
    """The channels (x, y) whose axis counts things: whole-number ticks (format "d")."""
    out: set[str] = set()
    for layer in spec.get("layer", [spec]):
        for channel in ("x", "y"):
            axis = (layer.get("encoding", {}).get(channel) or {}).get("axis") or {}
            if axis.get("format") == "d":
                out.add(channel.upper())
    return out


def test_every_chart_kind_has_its_title_and_axis_titles_with_units(pages: dict[str, Path]) -> None:
    kinds = set()
    for page, kind, spec in every_chart(pages):
        kinds.add(kind)
        drawn = Rendered(spec)
        where = f"{page}: {title(spec)}"
        assert drawn.title == [title(spec)], where
        assert {a.orient for a in drawn.axes} == {"X", "Y"}, where
        for axis in drawn.axes:
            if not axis.linear:  # categories: policies, nodes, steps, lanes
                assert axis.ticks, where
                continue
            if axis.ticks and all(DURATION.match(t) for t in axis.ticks):  # virtual time: the unit is in the ticks
                assert axis.title == "virtual time", where
                continue
            assert axis.title is not None and UNIT.search(axis.title), f"{where}: axis {axis.title!r} has no unit"
        if kind == "heatmap":
            assert drawn.legends == ["requested / allocatable (%)"], where
    assert kinds == KINDS


def whole_numbers(ticks: list[str]) -> bool:
    """Tick labels of whole numbers, each once (a tick at 0.5 labelled "1" beside the 1 is not)."""
    return (
        len(ticks) >= 2
        and all(re.fullmatch(r"-?\d+", t.replace(",", "")) for t in ticks)
        and (len(set(ticks)) == len(ticks))
    )


def test_every_spec_is_valid_vega_lite(pages: dict[str, Path]) -> None:
    """Against the Vega-Lite schema Altair ships (the page and vl-convert would otherwise warn, or draw less)."""
    import jsonschema
    from altair.vegalite.v6.schema import core

    validator = jsonschema.Draft7Validator(core.load_schema())
    for page, _, spec in every_chart(pages):
        errors = [e.message[:200] for e in validator.iter_errors(spec)]
        assert not errors, f"{page}: {title(spec)}: {errors[:3]}"


def test_count_axes_tick_whole_numbers(pages: dict[str, Path]) -> None:
    counted = []
    for page, _, spec in every_chart(pages):
        for axis in Rendered(spec).axes:
            if axis.orient in count_axes(spec):
                counted.append(title(spec))
                assert whole_numbers(axis.ticks), (page, title(spec), axis.ticks)
    # among them, charts whose counts are all 0 or 1, where a linear axis would tick 0.2, 0.4, ...
    assert {"Disruptions", "Disruptions per step", "Pods after each step", "Pods at the end"} <= set(counted)


def _scene(spec: dict[str, Any]) -> dict[str, Any]:
    scene: dict[str, Any] = vl_convert.vegalite_to_scenegraph(spec)["scenegraph"]
    return scene


def _groups(node: Any, role: str) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if node.get("role") == role:
            yield node
        for item in node.get("items", []):
            yield from _groups(item, role)


def _marks(spec: dict[str, Any], name: str) -> list[dict[str, Any]]:
    def walk(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("name") == name:
                yield from node.get("items", [])
            for item in node.get("items", []):
                yield from walk(item)

    return list(walk(_scene(spec)))


def test_legends_sit_under_the_plot(pages: dict[str, Path]) -> None:
    for page, _, spec in every_chart(pages):
        scene = _scene(spec)
        frame = scene["items"][0]  # the plot area of a single view
        for legend in _groups(frame, "legend"):
            for item in legend["items"]:
                assert item["y"] >= frame["height"], f"{page}: {title(spec)}: a legend over the plot"


def test_pngs_render_and_the_same_input_gives_the_same_bytes(pages: dict[str, Path], tmp_path: Path) -> None:
    one_per_kind = {kind: spec for _, kind, spec in every_chart(pages)}
    assert set(one_per_kind) == KINDS
    for kind, spec in sorted(one_per_kind.items()):
        png = chartspec.to_png(spec)
        assert png.startswith(b"\x89PNG") and png == chartspec.to_png(spec)
        (tmp_path / f"{kind}.png").write_bytes(png)
        print(f"PNG of a {kind} chart: {tmp_path / f'{kind}.png'}")
    # and the page: the same document, the same HTML (SOURCE_DATE_EPOCH fixes the page's date)
    doc = tmp_path / "run.json"
    doc.write_text(invoke("run", str(EX / "what-if" / "scenario.yaml"), "-o", "json"), encoding="utf-8")
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    texts = []
    for name in ("a.html", "b.html"):
        result = runner.invoke(app, ["report", str(doc), "-o", str(tmp_path / name)], env=env)
        assert result.exit_code == 0, result.output
        texts.append((tmp_path / name).read_text(encoding="utf-8"))
    assert texts[0] == texts[1] and "2023-11-14 22:13 UTC" in texts[0]


# -- the fixes -----------------------------------------------------------------------------------------------


def test_our_median_is_drawn_over_the_published_mean(pages: dict[str, Path]) -> None:
    spec = chart(pages, "compare", "GPU allocation vs arrived workload")
    marks = Rendered(spec).marks
    dashed = next(i for i, m in enumerate(marks) if "dashed_marks" in m)
    solid = next(i for i, m in enumerate(marks) if "solid_marks" in m)
    assert dashed < solid  # SVG paints in document order: ours last, on top


def _colors(spec: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for layer in spec.get("layer", [spec]):
        scale = (layer.get("encoding", {}).get("color") or {}).get("scale") or {}
        if "domain" in scale and "range" in scale:
            out.update(zip(scale["domain"], scale["range"], strict=True))
    return out


def fields(mark: dict[str, Any]) -> dict[str, str]:
    """A drawn mark's data, from its description ("policy: FGD; s: s1")."""
    return dict(part.split(": ", 1) for part in mark["description"].split("; "))


def test_one_colour_means_one_thing_on_a_page(pages: dict[str, Path]) -> None:
    for page, path in pages.items():
        seen: dict[str, str] = {}
        for c in charts_of(path):
            for key, color in _colors(c["spec"]).items():
                assert seen.setdefault(key, color) == color, f"{page}: {key} in two colours"
        named = [k for k in seen if seen[k] != chartspec.REFERENCE]
        if len(named) <= len(chartspec.PALETTE):
            assert len({seen[k] for k in named}) == len(named), f"{page}: two meanings share a colour: {seen}"
    # a policy keeps its colour from the curves to the bars, ours and the published one alike
    curves = chart(pages, "compare", "GPU allocation vs arrived workload")
    bars = chart(pages, "compare", "Unallocated GPU % at 100% arrived (lower is better)")
    line = {fields(m)["policy"]: m["stroke"] for m in _marks(curves, "solid_marks")}
    fills = {(fields(m)["bar"], fields(m)["key"]): m["fill"] for m in _marks(bars, "bar_marks")}
    assert fills[("packsched, 2 seeds (1, 2)", "FGD")] == fills[("published (Weng et al., ATC '23)", "FGD")]
    assert fills[("packsched, 2 seeds (1, 2)", "FGD")] == line["FGD"]
    assert fills[("packsched, 2 seeds (1, 2)", "BestFit")] == line["BestFit"] != line["FGD"]


def test_each_step_has_its_own_place_and_the_end_has_room(pages: dict[str, Path]) -> None:
    # the last step ("add a GPU node", 1m30s) takes no time: it ends when the step before does
    spec = chart(pages, "run", "Pods after each step")
    points = _marks(spec, "points_marks")
    running = sorted(m["x"] for m in points if fields(m)["key"] == "running")
    assert len(running) == 6 and len(set(running)) == 6
    width = spec["width"]
    assert max(running) < width - 10  # not squeezed against the right edge
    # on a time axis, the last event (the last step, at the end) keeps a margin from the edge too
    timeline = chart(pages, "run", "Event timeline")
    xs = [m["x"] for m in _marks(timeline, "event_marks")]
    assert max(xs) <= timeline["width"] - 10 and min(xs) >= 10


def test_a_node_has_no_utilisation_before_it_was_added(pages: dict[str, Path]) -> None:
    spec = chart(pages, "run", "Per-node utilisation over time (%)")
    (rows,) = spec["datasets"].values()
    added = next(r for r in rows if r["node"] == "c-0" and r["layer"] == "cpu")["v"]  # added at 1m30s, the end
    assert added[:-1] == [None] * (len(added) - 1) and added[-1] == 0.0
    expr = spec["layer"][0]["encoding"]["x"]["axis"]["labelExpr"]  # "... ? [the columns' labels][datum.value] ..."
    match = re.search(r"(\[.*\])\[datum\.value\]", expr)
    assert match is not None
    labels = json.loads(match.group(1))
    assert labels[-1] == "1m30s"  # the end: the state the scenario left, a column of its own
    cells = [m for m in _marks(spec, "cell_marks") if fields(m)["node"] == "c-0"]
    assert len(cells) == len(added)
    by_col = sorted(cells, key=lambda m: m["x"])
    assert [m["fill"] for m in by_col[:-1]] == [chartspec.NO_VALUE] * (len(added) - 1)
    assert by_col[-1]["fill"] != chartspec.NO_VALUE


# -- in a browser --------------------------------------------------------------------------------------------

AXES_JS = """
return [...document.querySelectorAll('figure.chart')].map(fig => ({
  kind: fig.className.replace('chart chart-', ''),
  title: [...fig.querySelectorAll('.role-title-text text')].map(t => t.textContent),
  axes: [...fig.querySelectorAll('g[aria-roledescription="axis"]')].map(g => ({
    label: g.getAttribute('aria-label'),
    ticks: [...g.querySelectorAll('.role-axis-label text')].map(t => t.textContent),
  })),
  box: (b => [b.width, b.height])(fig.querySelector('svg.marks').getBoundingClientRect()),
}));
"""


@pytest.mark.parametrize("page", ["run", "whatif", "tune", "quotas-over-time", "explain", "quotas", "demo"])
def test_every_chart_is_drawn_in_the_browser(browser: Any, pages: dict[str, Path], page: str, tmp_path: Path) -> None:
    load(browser, pages[page])
    drawn = browser.execute_script(AXES_JS)
    specs = charts_of(pages[page])
    assert len(drawn) == len(specs) > 0
    for fig, c in zip(drawn, specs, strict=True):
        spec = c["spec"]
        assert fig["kind"] == c["kind"] and fig["title"] == [title(spec)]
        assert fig["box"][0] > 150 and fig["box"][1] > 100
        for axis in fig["axes"]:
            m = re.match(r"([XY])-axis titled '(.*)' for a (linear)?", axis["label"])
            assert m is not None or c["kind"] == "timeline", axis["label"]  # a timeline's lanes name themselves
            if m and m.group(3):
                assert UNIT.search(m.group(2)) or all(DURATION.match(t) for t in axis["ticks"]), axis["label"]
            if m and m.group(1) in count_axes(spec):
                assert whole_numbers(axis["ticks"]), axis
    screenshot(browser, tmp_path / f"{page}.png")


def test_the_tune_page_has_the_search_the_trials_and_the_whole_best_configuration(
    browser: Any, pages: dict[str, Path]
) -> None:
    from selenium.webdriver.common.by import By

    model = embedded(pages["tune"])
    summary = json.loads((pages["tune"].parent / "tune" / "summary.json").read_text(encoding="utf-8"))
    ids = [s["id"] for s in model["sections"]]
    assert ids == ["summary", "best", "best-config", "charts", "trials", "holdout"]
    best = next(s for s in model["sections"] if s["id"] == "best")
    assert [r[0] for r in best["rows"]] == list(summary["best"]["choice"])  # every parameter, the weights too
    assert {"plugin.NodeResourcesFit", "plugin.NodeResourcesBalancedAllocation", "percentageOfNodesToScore"} <= {
        r[0] for r in best["rows"]
    }
    config = next(s for s in model["sections"] if s["id"] == "best-config")["text"]
    assert "kind: KubeSchedulerConfiguration" in config and "percentageOfNodesToScore" in config
    titles = [title(c["spec"]) for c in charts_of(pages["tune"])]
    assert titles[0].startswith("The search: unallocated GPU % at 100% arrived per trial")
    load(browser, pages["tune"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trials-table tbody tr")) == 4
    assert len(browser.find_elements(By.CSS_SELECTOR, ".chart g.points_marks path")) == 4  # a point per trial
    assert "percentageOfNodesToScore" in browser.find_element(By.CSS_SELECTOR, "#best-config pre").text
    # the same page from the saved summary.json, its trials.csv and best-config.yaml beside it
    saved = pages["tune"].parent / "tune" / "summary.json"
    invoke("report", str(saved))
    again = embedded(saved.with_suffix(".html"))
    assert [s["id"] for s in again["sections"]] == ids
    trials = next(s for s in again["sections"] if s["id"] == "trials")
    assert trials["rows"] == next(s for s in model["sections"] if s["id"] == "trials")["rows"]


def test_a_tune_summary_alone_says_what_its_page_lacks(pages: dict[str, Path], tmp_path: Path) -> None:
    summary = json.loads((pages["tune"].parent / "tune" / "summary.json").read_text(encoding="utf-8"))
    summary["outputs"] = {k: f"/nonexistent/{Path(v).name}" for k, v in summary["outputs"].items()}
    alone = tmp_path / "summary.json"
    alone.write_text(json.dumps(summary), encoding="utf-8")
    invoke("report", str(alone))
    model = embedded(alone.with_suffix(".html"))
    assert [s["id"] for s in model["sections"]] == ["summary", "best", "charts", "holdout"]  # no search, no trials
    assert "trials.csv was not found" in model["sections"][0]["notes"][0]
    assert [title(c["spec"]) for c in charts_of(alone.with_suffix(".html"))] == [
        "Held-out seeds 3: the best configuration and the baselines"
    ]
