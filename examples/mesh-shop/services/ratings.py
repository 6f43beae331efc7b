"""ratings: the customers' star ratings per product (the average and how many). Its own store
and its own team; reviews v2 shows them."""
from shoplib import serve

STARS = {1: [5, 4, 5, 3], 2: [4, 4, 5], 3: [2, 3]}


def ratings(m, headers):
    pid = int(m.group(1))
    stars = STARS.get(pid, [])
    avg = round(sum(stars) / len(stars), 1) if stars else None
    return 200, {"productId": pid, "stars": avg, "count": len(stars)}


serve("ratings", [(r"/ratings/(\d+)", ratings)])
