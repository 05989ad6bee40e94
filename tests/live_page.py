"""Apply a live turn's SSE updates the way htmx does, so a test reads what the page shows.

Each update is a fragment of out-of-band swaps: `hx-swap-oob="true"` replaces the element
with the same id; `hx-swap-oob="beforeend:#id"` appends the fragment's children to that element.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag


class LivePage:
    """A live answer as a page holding it would draw it after the updates applied so far.

    `tid` is the id of the answer's message on the page (`turn-N`), read from the first update.
    """

    def __init__(self) -> None:
        self.tid = ""
        self.soup = BeautifulSoup('<div id="live-answer"></div>', "html.parser")
        self.root = self.soup.find(id="live-answer")
        self.bytes = 0

    def apply(self, fragment: str) -> None:
        self.bytes += len(fragment.encode())
        updates = BeautifulSoup(fragment, "html.parser")
        wrapper = updates.find("div")
        for element in [child for child in (wrapper.children if wrapper else []) if isinstance(child, Tag)]:
            swap = element.attrs.pop("hx-swap-oob", None)
            if not self.tid and str(element.get("id", "")).endswith("-thoughts"):
                self.tid = element["id"][: -len("-thoughts")]
            if swap == "true":
                current = self.soup.find(id=element.get("id"))
                if current is not None:
                    current.replace_with(element)
                else:
                    self.root.append(element)
            elif swap and swap.startswith("beforeend:#"):
                target = self.soup.find(id=swap[len("beforeend:#"):])
                assert target is not None, f"an update appends to {swap!r}, which the page does not have"
                for child in list(element.children):
                    target.append(child)

    def find(self, element_id: str) -> Tag | None:
        return self.soup.find(id=element_id)

    def html(self) -> str:
        return str(self.root)

    def body(self) -> str:
        """The answer's HTML as shown now."""
        body = self.find(f"{self.tid}-body")
        return "".join(str(child) for child in body.children) if body is not None else ""


def page_of(events: list[tuple[str, str]]) -> LivePage:
    page = LivePage()
    for name, data in events:
        if name == "update":
            page.apply(data)
    return page
