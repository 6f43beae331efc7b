"""frontend: the shop's pages. Puts a product page together from the catalogue and the reviews
(which may add ratings). The page degrades: without reviews it still sells. The JSON API
(/api/products/ID) says 502 when a service behind it failed, so callers can tell."""
import html

from shoplib import Failure, call, serve


def product_api(m, headers):
    pid = m.group(1)
    product = call(headers, f"http://catalogue/products/{pid}")
    reviews = call(headers, f"http://reviews/reviews/{pid}")
    return 200, {"product": product, "reviews": reviews["reviews"],
                 "rating": reviews.get("rating"), "reviewsVersion": reviews["version"]}


def index(m, headers):
    rows = []
    for p in call(headers, "http://catalogue/products"):
        try:
            r = call(headers, f"http://reviews/reviews/{p['id']}")
            stars = r.get("rating", {}).get("stars") if r.get("rating") else None
            text = "; ".join(f"{x['reviewer']}: {x['text']}" for x in r["reviews"])
            extra = f" ({stars} stars)" if stars else ""
            rev = f"{html.escape(text)}{extra} <small>[reviews {r['version']}]</small>"
        except Failure:
            rev = "<em>reviews are unavailable right now</em>"
        rows.append(f"<li><b>{html.escape(p['name'])}</b> {p['price']:.2f} EUR - {rev}</li>")
    page = "<html><body><h1>Coffee shop</h1><ul>" + "".join(rows) + "</ul></body></html>\n"
    return 200, page, "text/html; charset=utf-8"


serve("frontend", [(r"/", index), (r"/api/products/(\d+)", product_api)])
