"""The HTML report: self-contained, escaped, with the tree and the plots; checked in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from lineage_fixture import NODES, RUN, SCRIPT
from png_check import ink_stats

from evolve.report.html import write_report

CHART_IDS = ("chart-rounds", "chart-splits", "chart-tokens", "chart-budget", "chart-agreement", "chart-usage")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--hide-scrollbars")


@pytest.fixture
def report(fx, tmp_path) -> Path:
    return write_report(fx.store, RUN, tmp_path / "report.html")


def test_report_escapes_model_output_and_hypotheses(report):
    html = report.read_text()
    assert "<script" not in html.lower()
    assert html.count("&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;") >= 2  # rollout output + hypothesis


def test_report_is_self_contained(report):
    html = report.read_text()
    assert not re.search(r"<(link|img|iframe|object|embed)\b", html, re.I)
    assert not re.search(r"(src|href)\s*=", html, re.I)
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in html  # even a browser that met a script would not run or fetch anything


def test_report_has_tree_plots_and_tables(report):
    html = report.read_text()
    assert 'id="lineage-tree"' in html
    assert html.count('class="node status-') == len(NODES)
    for chart in CHART_IDS:
        assert f'id="{chart}"' in html
    for text in ("Self-consistency voting reduces random errors", "set control samples", "v2", "0.920",
                 "ood:fixture-ood", "0.640 [0.540, 0.740]", "300 of 400 rollouts", "0.475 → 0.655",
                 "warning: ood:fixture-ood: best 0.520 is below the majority-class baseline 0.550",
                 "decisions rested on a sample of 43 of the 200 validation tasks"):
        assert text in html, text
    assert "cost rule violated" in html  # rejected candidates keep their reason


def test_report_cli_writes_the_file(cli, tmp_path):
    result = cli("report", RUN, "--out", str(tmp_path / "r.html"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r.html").stat().st_size > 10_000
    missing = cli("report", "nope", "--out", str(tmp_path / "x.html"))
    assert missing.exit_code == 2 and not (tmp_path / "x.html").exists()


def test_report_of_a_run_without_summary(fx, tmp_path):
    fx.store.create_run("fresh", {"budget": 10}, benchmark="b", model="mock", preset="rrsi")
    html = write_report(fx.store, "fresh", tmp_path / "fresh.html").read_text()
    assert "no seed-vs-best summary yet" in html and 'id="lineage-tree"' in html


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not Path(CHROMIUM).exists() or shutil.which("chromium") is None,
                    reason="needs Debian chromium (apt-get install -y chromium; .ci/run installs it)")
def test_report_in_headless_chromium(report, tmp_path):
    shot = tmp_path / "report.png"
    done = _chromium([f"--screenshot={shot}", "--window-size=900,1200", report.as_uri()], tmp_path / "p1")
    assert shot.is_file(), done.stderr[-2000:]
    ink, colors = ink_stats(shot)
    assert ink > 0.05 and colors > 20, (ink, colors)
    dom = _chromium(["--dump-dom", report.as_uri()], tmp_path / "p2").stdout
    assert 'id="lineage-tree"' in dom and dom.count('class="node status-') == len(NODES)
    for chart in CHART_IDS:
        assert f'id="{chart}"' in dom
    assert "<script" not in dom.lower()  # the planted script stayed text
    assert SCRIPT.replace("<", "&lt;").replace(">", "&gt;") in dom
