"""Payment helpers the graph's nodes call."""

import requests


def charge_card(amount: int) -> None:
    requests.post("https://payments.invalid/charge", json={"amount": amount})
