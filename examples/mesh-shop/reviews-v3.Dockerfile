# shop/reviews:v3 (services/reviews.py explains what each version does).
FROM minik8s/python:3.11
COPY services/ /app/
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 REVIEWS_VERSION=v3
CMD ["python3", "/app/reviews.py"]
