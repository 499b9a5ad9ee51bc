"""The console in a real browser: headless Chromium, driven through Debian's chromedriver by
Selenium, against the real daemon. In development (open on loopback) it pages through the
users, searches, opens an account's ledger and goes back to a moment before its email changed;
a display name made of HTML shows as text and runs nothing. In production it signs in with an
admin token for a session cookie, and signs out. Screenshots at 1280x800 and 390x844 go to
.build/screenshots/."""

import json
import pathlib
import time

import requests
from firebase_admin import auth
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from conftest import PROJECT, Daemon, free_port

SCREENSHOTS = pathlib.Path(__file__).resolve().parents[2] / ".build" / "screenshots"
HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def shoot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, height in ((1280, 800), (390, 844)):
        driver.set_window_size(width, height)
        driver.save_screenshot(str(SCREENSHOTS / f"console-{name}-{width}x{height}.png"))
    driver.set_window_size(1280, 800)


def no_alert(driver):
    try:
        driver.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def test_the_console_pages_searches_and_travels_back_in_an_accounts_ledger(daemon, admin):
    records = [auth.ImportUserRecord(f"user{index:03d}", email=f"u{index}@example.com") for index in range(120)]
    assert auth.import_users(records, app=admin).success_count == 120
    auth.create_user(uid="target", email="before@example.com", display_name=HOSTILE, app=admin)
    created = auth.get_user("target", app=admin).user_metadata.creation_timestamp
    time.sleep(1.1)
    auth.update_user("target", email="after@example.com", app=admin)

    driver = browser()
    try:
        driver.get(daemon.url + "/console")
        assert driver.current_url.endswith("/console/users")
        assert "Users (121)" in driver.find_element(By.TAG_NAME, "h1").text
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert len(rows) == 50
        assert rows[0].find_element(By.CSS_SELECTOR, "td.uid").text == "target"
        shoot(driver, "users")
        driver.find_element(By.LINK_TEXT, "Next page").click()
        uids = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td.uid")]
        assert uids[0] == "user049" and len(uids) == 50

        search = driver.find_element(By.NAME, "q")
        search.send_keys("u7@example.com")
        search.submit()
        assert [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td.uid")] == ["user007"]

        driver.get(daemon.url + "/console/users?q=target")
        driver.find_element(By.LINK_TEXT, "target").click()
        assert no_alert(driver)
        details = dict(zip([e.text for e in driver.find_elements(By.TAG_NAME, "dt")], [e.text for e in driver.find_elements(By.TAG_NAME, "dd")]))
        assert details["Identifier"] == "after@example.com"
        assert details["Display name"] == HOSTILE
        assert driver.find_elements(By.CSS_SELECTOR, "main script, main img") == []
        events = [row.find_elements(By.TAG_NAME, "td")[2].text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert events[0].startswith("account.created") and any(e.startswith("account.email_changed") for e in events)
        shoot(driver, "account")

        # Back to the moment of its creation: the old address.
        driver.find_elements(By.CSS_SELECTOR, "tbody tr td a")[0].click()
        assert f"?at={created}" in driver.current_url or "?at=" in driver.current_url
        details = dict(zip([e.text for e in driver.find_elements(By.TAG_NAME, "dt")], [e.text for e in driver.find_elements(By.TAG_NAME, "dd")]))
        assert details["Identifier"] == "before@example.com"
        assert driver.find_element(By.TAG_NAME, "h2").text.startswith("As of ")
        shoot(driver, "account-as-of")
        assert no_alert(driver)
    finally:
        driver.quit()

    # The page may not be framed, by anyone: CSP frame-ancestors and X-Frame-Options.
    page = requests.get(daemon.url + "/console/users", timeout=10)
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"


def test_production_signs_in_with_an_admin_token_for_a_session_cookie(tmp_path):
    token = "console-browser-admin-token-0123456789abcdef"
    root = tmp_path / "data"
    root.mkdir()
    daemon = Daemon(str(root), free_port(), env={
        "HEARTH_PROFILE": "production", "HEARTH_API_KEYS": json.dumps({"console-key": PROJECT}), "HEARTH_ADMIN_TOKENS": token})
    daemon.start()
    driver = browser()
    try:
        requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params={"key": "console-key"},
                      json={"email": "prod@example.com", "password": "correct-horse-42"}, timeout=10).raise_for_status()
        driver.get(daemon.url + "/console/users")
        assert driver.current_url.endswith("/console/sign-in")
        field = driver.find_element(By.NAME, "token")
        field.send_keys("not-the-token")
        field.submit()
        assert "not accepted" in driver.find_element(By.CSS_SELECTOR, "[role=alert]").text
        shoot(driver, "sign-in")
        field = driver.find_element(By.NAME, "token")
        field.send_keys(token)
        field.submit()
        assert driver.current_url.endswith("/console/users")
        assert [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "tbody td:first-child")] == ["prod@example.com"]
        cookie = driver.get_cookie("hearth_console")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and token not in cookie["value"]
        driver.find_element(By.CSS_SELECTOR, "form.signout button").click()
        assert driver.current_url.endswith("/console/sign-in")
        driver.get(daemon.url + "/console/users")
        assert driver.current_url.endswith("/console/sign-in")
    finally:
        driver.quit()
        daemon.stop()
