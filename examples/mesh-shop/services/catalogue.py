"""catalogue: the products the shop sells. Owned by the merchandising team; changes when the
range changes, scales with browsing."""
from shoplib import serve

PRODUCTS = {
    1: {"id": 1, "name": "Espresso machine", "price": 249.00},
    2: {"id": 2, "name": "Burr grinder", "price": 119.00},
    3: {"id": 3, "name": "Milk jug", "price": 14.50},
}


def products(m, headers):
    return 200, list(PRODUCTS.values())


def product(m, headers):
    p = PRODUCTS.get(int(m.group(1)))
    return (200, p) if p else (404, {"error": f"no product {m.group(1)}"})


serve("catalogue", [(r"/products", products), (r"/products/(\d+)", product)])
