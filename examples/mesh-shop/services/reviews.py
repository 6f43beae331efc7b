"""reviews: what customers wrote about a product. Released in versions (the image's
REVIEWS_VERSION):

  v1  the reviews' text
  v2  the text and each product's star rating from the ratings service
  v3  asks ratings for the new per-review ratings API (/v2/ratings/...), which ratings does not
      serve yet: every request fails with 500. The version a rollout must catch.
"""
import os

from shoplib import Failure, call, serve

VERSION = os.environ.get("REVIEWS_VERSION", "v1")
REVIEWS = {
    1: [{"reviewer": "ana", "text": "Proper crema from day one."},
        {"reviewer": "bo", "text": "Loud, but worth it."}],
    2: [{"reviewer": "chen", "text": "Even grind, easy to clean."}],
    3: [{"reviewer": "dee", "text": "Fine for the price."}],
}


def reviews(m, headers):
    pid = int(m.group(1))
    body = {"productId": pid, "version": VERSION, "reviews": REVIEWS.get(pid, [])}
    if VERSION == "v2":
        body["rating"] = call(headers, f"http://ratings/ratings/{pid}")
    elif VERSION == "v3":
        try:
            body["rating"] = call(headers, f"http://ratings/v2/ratings/{pid}")
        except Failure as e:
            return 500, {"error": f"reviews {VERSION}: {e}", "version": VERSION}
    return 200, body


serve("reviews", [(r"/reviews/(\d+)", reviews)])
