"""A server's URL question shows its link only for http(s): a hostile server cannot put a script in the page."""

from __future__ import annotations

import pytest
from fasthtml.common import to_xml

from sidespin.web.questions import QuestionForm


@pytest.mark.parametrize("url", ["javascript:alert(document.cookie)", "JaVaScRiPt:alert(1)", " javascript:alert(1)",
                                 "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)",
                                 '"><script>alert(1)</script>'])
def test_a_url_that_is_not_http_is_shown_as_text_not_as_a_link(url: str) -> None:
    drawn = to_xml(QuestionForm("q1", None, url))
    assert "href=" not in drawn and "<script>" not in drawn
    assert "question-url" in drawn  # the person still sees what the server asked to open


def test_an_https_url_is_a_link_that_opens_apart_from_the_page() -> None:
    drawn = to_xml(QuestionForm("q1", None, "https://example.org/consent?a=1&b=2"))
    assert 'href="https://example.org/consent?a=1&amp;b=2"' in drawn
    assert 'rel="noopener noreferrer"' in drawn and 'target="_blank"' in drawn
