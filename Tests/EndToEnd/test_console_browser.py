"""The console in a real browser: headless Chromium, driven through Debian's chromedriver by
Selenium, against the real daemon. In development (open on loopback) it pages through the
users, searches, opens an account's ledger and goes back to a moment before its email changed;
a display name made of HTML shows as text and runs nothing. It adds, edits, disables, revokes
and deletes through its forms; a change without the form's token and a framed console are
refused; it pages through 10,000 users. In production it signs in with an admin token for a
session cookie, and signs out. Screenshots at 1280x800 and 390x844 go to .build/screenshots/."""

import http.server
import json
import pathlib
import threading
import time

import requests
from firebase_admin import auth
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

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
        driver.get(daemon.url + "/console/users")
        assert "Users (121)" in driver.find_element(By.TAG_NAME, "h1").text
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert len(rows) == 50
        assert rows[0].find_element(By.CSS_SELECTOR, "td.uid").text == "target"
        shoot(driver, "users")
        navigates(driver, driver.find_element(By.LINK_TEXT, "Next page").click)
        uids = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td.uid")]
        assert uids[0] == "user049" and len(uids) == 50

        search = driver.find_element(By.NAME, "q")
        search.send_keys("u7@example.com")
        navigates(driver, search.submit)
        assert [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td.uid")] == ["user007"]

        driver.get(daemon.url + "/console/users?q=target")
        navigates(driver, driver.find_element(By.LINK_TEXT, "target").click)
        assert no_alert(driver)
        details = dict(zip([e.text for e in driver.find_elements(By.TAG_NAME, "dt")], [e.text for e in driver.find_elements(By.TAG_NAME, "dd")]))
        assert details["Identifier"] == "after@example.com"
        assert details["Display name"] == HOSTILE
        assert driver.find_elements(By.CSS_SELECTOR, "main script, main img") == []
        events = [row.find_elements(By.TAG_NAME, "td")[2].text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert events[0].startswith("account.created") and any(e.startswith("account.email_changed") for e in events)
        shoot(driver, "account")

        # Back to the moment of its creation: the old address.
        navigates(driver, driver.find_elements(By.CSS_SELECTOR, "tbody tr td a")[0].click)
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
        navigates(driver, field.submit)
        assert "not accepted" in driver.find_element(By.CSS_SELECTOR, "[role=alert]").text
        shoot(driver, "sign-in")
        field = driver.find_element(By.NAME, "token")
        field.send_keys(token)
        navigates(driver, field.submit)
        assert driver.current_url.endswith("/console/users")
        assert [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "tbody td:first-child")] == ["prod@example.com"]
        cookie = driver.get_cookie("hearth_console")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and token not in cookie["value"]
        navigates(driver, driver.find_element(By.CSS_SELECTOR, "form.signout button").click)
        assert driver.current_url.endswith("/console/sign-in")
        driver.get(daemon.url + "/console/users")
        assert driver.current_url.endswith("/console/sign-in")
    finally:
        driver.quit()
        daemon.stop()


def details_of(driver):
    return dict(zip([e.text for e in driver.find_elements(By.TAG_NAME, "dt")], [e.text for e in driver.find_elements(By.TAG_NAME, "dd")]))


def submit(driver, action):
    """Presses the submit button of the form posting to `…/<action>`, and waits for the next page."""
    navigates(driver, lambda: driver.find_element(By.CSS_SELECTOR, f"form[action$='/{action}'] button[type=submit]").click())


def navigates(driver, act):
    """Does `act`, then waits until the page it was on has been replaced."""
    page = driver.find_element(By.TAG_NAME, "html")
    act()
    WebDriverWait(driver, 10).until(lambda _: replaced(page))
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.readyState") == "complete")


def replaced(element):
    """Whether the element's page is gone. Chromedriver says so with a stale-element error, or
    now and then with an inspector error that the node "does not belong to the document", which
    Selenium's `staleness_of` does not take for one."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise


def test_the_console_adds_edits_disables_revokes_and_deletes(daemon, admin):
    driver = browser()
    try:
        driver.get(daemon.url + "/console/users")
        navigates(driver, driver.find_element(By.LINK_TEXT, "Add user").click)
        for name, value in (("email", "ops@example.com"), ("password", "correct-horse-42"), ("displayName", HOSTILE), ("uid", "ops-1")):
            driver.find_element(By.NAME, name).send_keys(value)
        shoot(driver, "add-user")
        navigates(driver, driver.find_element(By.CSS_SELECTOR, "form[action='/console/add-user'] button").click)
        assert driver.current_url.endswith("/console/users/ops-1?done=created")
        assert "The user was created." in driver.find_element(By.CSS_SELECTOR, "[role=status]").text
        assert details_of(driver)["Display name"] == HOSTILE and no_alert(driver)
        assert driver.find_elements(By.CSS_SELECTOR, "main script, main img") == []
        signed_in = requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
                                  params={"key": "fake-api-key"}, timeout=10,
                                  json={"email": "ops@example.com", "password": "correct-horse-42", "returnSecureToken": True})
        signed_in.raise_for_status()

        # Edit: a new address and name, verified, with a claim; the form keyboard-driven.
        email = driver.find_element(By.NAME, "email")
        email.clear()
        email.send_keys("ops@example.org")
        name = driver.find_element(By.NAME, "displayName")
        name.clear()
        name.send_keys("Ops")
        driver.find_element(By.NAME, "emailVerified").click()
        claims = driver.find_element(By.NAME, "customClaims")
        claims.clear()
        claims.send_keys('{"role":"support"}')
        shoot(driver, "edit")
        submit(driver, "edit")
        assert driver.current_url.endswith("?done=saved")
        details = details_of(driver)
        assert details["Identifier"] == "ops@example.org" and details["Display name"] == "Ops" and details["Email verified"] == "yes"
        record = auth.get_user("ops-1", app=admin)
        assert record.email == "ops@example.org" and record.custom_claims == {"role": "support"}

        # A reserved claim is refused, with Firebase's reason, and nothing changes.
        claims = driver.find_element(By.NAME, "customClaims")
        claims.clear()
        claims.send_keys('{"firebase":1}')
        submit(driver, "edit")
        assert "FORBIDDEN_CLAIM" in driver.find_element(By.CSS_SELECTOR, "[role=alert]").text
        assert auth.get_user("ops-1", app=admin).custom_claims == {"role": "support"}

        submit(driver, "disable")
        assert driver.current_url.endswith("?done=disabled") and auth.get_user("ops-1", app=admin).disabled
        driver.get(daemon.url + "/console/users?q=ops-1")
        assert "disabled" in driver.find_element(By.CSS_SELECTOR, "tbody tr").text
        navigates(driver, driver.find_element(By.LINK_TEXT, "ops-1").click)
        submit(driver, "enable")
        assert not auth.get_user("ops-1", app=admin).disabled

        time.sleep(1.1)
        submit(driver, "revoke")
        assert driver.current_url.endswith("?done=revoked")
        refreshed = requests.post(f"{daemon.url}/securetoken.googleapis.com/v1/token", params={"key": "fake-api-key"}, timeout=10,
                                  data={"grant_type": "refresh_token", "refresh_token": signed_in.json()["refreshToken"]})
        assert refreshed.status_code == 400

        driver.find_element(By.CSS_SELECTOR, "select[name=type] option[value=PASSWORD_RESET]").click()
        submit(driver, "link")
        link = driver.find_element(By.ID, "generated-link").get_attribute("value")
        assert "mode=resetPassword" in link and "oobCode=" in link
        shoot(driver, "account-actions")

        # A change without the form's token is refused, with the session's own cookie.
        cookie = driver.get_cookie("hearth_console")["value"]
        forged = requests.post(f"{daemon.url}/console/users/ops-1/disable", data={"csrf": "forged"}, timeout=10,
                               headers={"Origin": daemon.url}, cookies={"hearth_console": cookie}, allow_redirects=False)
        assert forged.status_code == 403 and not auth.get_user("ops-1", app=admin).disabled

        driver.find_element(By.NAME, "confirm").click()
        submit(driver, "delete")
        assert driver.current_url.endswith("?done=deleted")
        assert "Deleted: its history stays." in driver.find_element(By.TAG_NAME, "main").text
        events = [row.find_elements(By.TAG_NAME, "td")[2].text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert events[-1].startswith("account.deleted")
        actors = {row.find_elements(By.TAG_NAME, "td")[3].text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")}
        assert "admin: console:owner" in actors
        shoot(driver, "deleted")
    finally:
        driver.quit()


class FramingPage(http.server.BaseHTTPRequestHandler):
    """Another origin's page that puts the console in a frame."""
    target = ""

    def do_GET(self):
        body = f'<!doctype html><title>framing</title><iframe id="console" src="{self.target}" width="800" height="600"></iframe>'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_the_console_refuses_a_frame_and_pages_through_ten_thousand_users(daemon, admin):
    for batch in range(10):
        records = [auth.ImportUserRecord(f"p{batch * 1000 + index:05d}", email=f"p{batch * 1000 + index}@example.com")
                   for index in range(1000)]
        assert auth.import_users(records, app=admin).success_count == 1000

    FramingPage.target = daemon.url + "/console/users"
    framer = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FramingPage)
    threading.Thread(target=framer.serve_forever, daemon=True).start()
    driver = browser()
    try:
        # The browser refuses to show it: the frame holds no console.
        driver.get(f"http://localhost:{framer.server_address[1]}/")
        driver.switch_to.frame(driver.find_element(By.ID, "console"))
        assert "Hearth" not in driver.page_source and driver.find_elements(By.CSS_SELECTOR, "td.uid") == []
        driver.switch_to.default_content()
        shoot(driver, "framed")

        driver.get(daemon.url + "/console/users")
        assert "Users (10000)" in driver.find_element(By.TAG_NAME, "h1").text
        seen = []
        started = time.monotonic()
        while True:
            # One round trip per page, not one per cell.
            seen += driver.execute_script("return [...document.querySelectorAll('td.uid')].map(cell => cell.textContent)")
            following = driver.find_elements(By.LINK_TEXT, "Next page")
            if not following:
                break
            navigates(driver, following[0].click)
        assert len(seen) == 10000 and len(set(seen)) == 10000 and seen == sorted(seen)
        print(f"paged through 10,000 users in {time.monotonic() - started:.1f} s")

        # The most recent first, by creation.
        navigates(driver, driver.find_element(By.CSS_SELECTOR, "th a[href$='sort=creation']").click)
        assert "sort=creation" in driver.current_url
        assert len(driver.find_elements(By.CSS_SELECTOR, "td.uid")) == 50
        shoot(driver, "users-by-creation")
    finally:
        driver.quit()
        framer.shutdown()


def test_a_settings_change_shows_in_the_history_and_the_cleanup_preview_is_charted(daemon, admin):
    for _ in range(3):
        requests.post(f"{daemon.url}/identitytoolkit.googleapis.com/v1/accounts:signUp", params={"key": "fake-api-key"},
                      json={"returnSecureToken": True}, timeout=10).raise_for_status()
    driver = browser()
    try:
        # The overview: sign-ups and sign-ins per day, accounts by provider, health, the ledger.
        driver.get(daemon.url + "/console")
        captions = [caption.text for caption in driver.find_elements(By.CSS_SELECTOR, "figcaption")]
        assert "Accounts created per day, last 30 days (3 in all)" in captions
        assert "Sign-ins per day, last 30 days (3 in all)" in captions
        assert details_of(driver)["Accounts"] == "3" and "Head hash" in details_of(driver)
        # Key metrics, from what /metrics renders: the sign-ups above among the requests, none a 5xx.
        metrics = details_of(driver)
        assert int(metrics["Requests answered"].split()[0]) >= 3 and "5xx: 0)" in metrics["Requests answered"]
        assert int(metrics["Ledger commits"].split(";")[0]) >= 3 and metrics["Disk full"] == "no"
        shoot(driver, "overview")
        navigates(driver, driver.find_element(By.LINK_TEXT, "Project").click)
        domains = driver.find_element(By.NAME, "authorizedDomains")
        domains.send_keys("\napp.example.com")
        submit_settings = driver.find_element(By.CSS_SELECTOR, "form[action='/console/project'] button[type=submit]")
        navigates(driver, submit_settings.click)
        assert driver.current_url.endswith("/console/project?done=saved")
        history = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        last = history[-1].text
        assert "project.config_changed" in last and "app.example.com" in last and "admin: console:owner" in last
        assert "app.example.com" in driver.find_element(By.NAME, "authorizedDomains").get_attribute("value")
        shoot(driver, "project")

        navigates(driver, driver.find_element(By.LINK_TEXT, "Cleanup").click)
        caption = driver.find_element(By.CSS_SELECTOR, "figure.chart:last-of-type figcaption").text
        assert caption == "Accounts the cleanup would purge, by day (3 in all)"
        bars = driver.find_elements(By.CSS_SELECTOR, "figure.chart:last-of-type rect")
        assert sum(1 for bar in bars if float(bar.get_attribute("height")) > 0) == 1
        assert "3 anonymous accounts would be scheduled" in driver.find_element(By.TAG_NAME, "main").text
        shoot(driver, "cleanup-preview")
        navigates(driver, driver.find_element(By.CSS_SELECTOR, "form[action='/console/cleanup'] button").click)
        details = details_of(driver)
        assert details["Scheduled"] == "3" and details["Cleanup"].startswith("on")
        shoot(driver, "cleanup-on")
    finally:
        driver.quit()
