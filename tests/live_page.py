"""Apply a live turn's SSE messages the way htmx and its SSE extension do, so a test reads what the page shows.

An `update` is a fragment of out-of-band swaps: `hx-swap-oob="true"` replaces the element with the
same id; `hx-swap-oob="beforeend:#id"` appends the fragment's children to that element;
`hx-swap-oob="innerHTML"` puts them in place of the children of the element with the same id.
Any other message goes to the element whose `sse-swap` names it (the answer's tail takes the plain
`message` and `block`): what it carries is appended (`hx-swap="beforeend"`), but a `block` goes after
the answer's blocks and empties the tail, as app.js does.
"""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag


class LivePage:
    """A live answer as a page holding it would draw it after the messages applied so far.

    `tid` is the id of the answer's message on the page (`turn-N`), read from the first update.
    """

    def __init__(self) -> None:
        self.tid = ""
        self.soup = BeautifulSoup('<div id="live-answer"></div>', "html.parser")
        self.root = self.soup.find(id="live-answer")
        self.bytes = 0

    def apply(self, fragment: str, event: str = "update") -> None:
        self.bytes += len(fragment.encode())
        updates = BeautifulSoup(fragment, "html.parser")
        if event == "update":
            wrapper = updates.find("div")
            for element in [child for child in (wrapper.children if wrapper else []) if isinstance(child, Tag)]:
                self._swap_oob(element)
            return
        listener = self.listener(event)
        assert listener is not None, f"a {event!r} message arrives and no element of the page takes it"
        assert listener.get("hx-swap") == "beforeend", listener
        target = listener
        if event == "block":
            target = self.find(listener["id"].removesuffix("-tail") + "-blocks")
            listener.clear()
        for child in list(updates.children):
            target.append(child)

    def listener(self, event: str) -> Tag | None:
        """The element that takes the stream's messages named `event` (htmx's SSE extension: `sse-swap`)."""
        for element in self.soup.find_all(attrs={"sse-swap": True}):
            if event in [name.strip() for name in element["sse-swap"].split(",")]:
                return element
        return None

    def _swap_oob(self, element: Tag) -> None:
        swap = element.attrs.pop("hx-swap-oob", None)
        if not self.tid and str(element.get("id", "")).endswith("-thoughts"):
            self.tid = element["id"][: -len("-thoughts")]
        if swap == "true":
            current = self.soup.find(id=element.get("id"))
            if current is not None:
                current.replace_with(element)
            else:
                self.root.append(element)
        elif swap == "innerHTML":
            target = self.soup.find(id=element.get("id"))
            assert target is not None, f"an update fills {element.get('id')!r}, which the page does not have"
            target.clear()
            for child in list(element.children):
                target.append(child)
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
        if name != "done":
            page.apply(data, name)
    return page
