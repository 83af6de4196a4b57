"""What ARM's ``environment()`` returns in each cloud, for ``--cloud``.

AzureCloud is the example the ARM template functions reference gives for the public cloud
(learn.microsoft.com/azure/azure-resource-manager/templates/template-functions-deployment#environment);
the sovereign clouds' endpoints and suffixes are those the Azure CLI hard-codes
(azure-cli, src/azure-cli-core/azure/cli/core/cloud.py). A member a cloud does not have reads
as unknown.
"""

from __future__ import annotations

from typing import Any

_ALIAS_DOC = (
    "https://raw.githubusercontent.com/Azure/azure-rest-api-specs/master/arm-compute/quickstart-templates/aliases.json"
)

ENVIRONMENTS: dict[str, dict[str, Any]] = {
    "AzureCloud": {
        "name": "AzureCloud",
        "gallery": "https://gallery.azure.com/",
        "graph": "https://graph.windows.net/",
        "portal": "https://portal.azure.com",
        "graphAudience": "https://graph.windows.net/",
        "activeDirectoryDataLake": "https://datalake.azure.net/",
        "batch": "https://batch.core.windows.net/",
        "media": "https://rest.media.azure.net",
        "sqlManagement": "https://management.core.windows.net:8443/",
        "vmImageAliasDoc": _ALIAS_DOC,
        "resourceManager": "https://management.azure.com/",
        "authentication": {
            "loginEndpoint": "https://login.windows.net/",
            "audiences": ["https://management.core.windows.net/", "https://management.azure.com/"],
            "tenant": "common",
            "identityProvider": "AAD",
        },
        "suffixes": {
            "acrLoginServer": ".azurecr.io",
            "azureDatalakeAnalyticsCatalogAndJob": "azuredatalakeanalytics.net",
            "azureDatalakeStoreFileSystem": "azuredatalakestore.net",
            "azureFrontDoorEndpointSuffix": "azurefd.net",
            "keyvaultDns": ".vault.azure.net",
            "sqlServerHostname": ".database.windows.net",
            "storage": "core.windows.net",
        },
    },
    "AzureUSGovernment": {
        "name": "AzureUSGovernment",
        "gallery": "https://gallery.usgovcloudapi.net/",
        "graph": "https://graph.windows.net/",
        "portal": "https://portal.azure.us",
        "graphAudience": "https://graph.windows.net/",
        "batch": "https://batch.core.usgovcloudapi.net/",
        "media": "https://rest.media.usgovcloudapi.net",
        "sqlManagement": "https://management.core.usgovcloudapi.net:8443/",
        "vmImageAliasDoc": _ALIAS_DOC,
        "resourceManager": "https://management.usgovcloudapi.net/",
        "authentication": {
            "loginEndpoint": "https://login.microsoftonline.us/",
            "audiences": ["https://management.core.usgovcloudapi.net/", "https://management.usgovcloudapi.net/"],
            "tenant": "common",
            "identityProvider": "AAD",
        },
        "suffixes": {
            "acrLoginServer": ".azurecr.us",
            "keyvaultDns": ".vault.usgovcloudapi.net",
            "sqlServerHostname": ".database.usgovcloudapi.net",
            "storage": "core.usgovcloudapi.net",
        },
    },
    "AzureChinaCloud": {
        "name": "AzureChinaCloud",
        "gallery": "https://gallery.chinacloudapi.cn/",
        "graph": "https://graph.chinacloudapi.cn/",
        "portal": "https://portal.azure.cn",
        "graphAudience": "https://graph.chinacloudapi.cn/",
        "batch": "https://batch.chinacloudapi.cn/",
        "media": "https://rest.media.chinacloudapi.cn",
        "sqlManagement": "https://management.core.chinacloudapi.cn:8443/",
        "vmImageAliasDoc": _ALIAS_DOC,
        "resourceManager": "https://management.chinacloudapi.cn/",
        "authentication": {
            "loginEndpoint": "https://login.chinacloudapi.cn/",
            "audiences": ["https://management.core.chinacloudapi.cn/", "https://management.chinacloudapi.cn/"],
            "tenant": "common",
            "identityProvider": "AAD",
        },
        "suffixes": {
            "acrLoginServer": ".azurecr.cn",
            "keyvaultDns": ".vault.azure.cn",
            "sqlServerHostname": ".database.chinacloudapi.cn",
            "storage": "core.chinacloudapi.cn",
        },
    },
}
