"""Identity provider configurations through the real firebase-admin SDK's provider-config
calls (OpenID Connect), against the real daemon: create, get, update, list, delete."""

import pytest
from firebase_admin import auth


def test_oidc_provider_config_lifecycle_with_the_admin_sdk(admin):
    created = auth.create_oidc_provider_config(
        "oidc.corp", client_id="corp-app", issuer="https://id.corp.example", display_name="Corp",
        enabled=True, app=admin)
    assert created.provider_id == "oidc.corp"
    assert created.client_id == "corp-app" and created.issuer == "https://id.corp.example"
    assert created.enabled is True and created.display_name == "Corp"
    assert created.id_token_response_type is True and not created.code_response_type
    # The secret goes in; it never comes back out.
    updated = auth.update_oidc_provider_config(
        "oidc.corp", client_secret="corp-secret-0123456789", code_response_type=True, id_token_response_type=False,
        app=admin)
    assert updated.code_response_type is True and updated.client_secret is None
    assert auth.get_oidc_provider_config("oidc.corp", app=admin).display_name == "Corp"
    assert [config.provider_id for config in auth.list_oidc_provider_configs(app=admin).iterate_all()] == ["oidc.corp"]
    auth.delete_oidc_provider_config("oidc.corp", app=admin)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_oidc_provider_config("oidc.corp", app=admin)
    with pytest.raises(ValueError):
        auth.create_oidc_provider_config("corp", client_id="x", issuer="https://x.example", app=admin)
