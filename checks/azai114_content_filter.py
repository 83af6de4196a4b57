"""AZAI-114 content-filter."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from checks._common import AI_LZ_CHECKLIST, AZURE_POLICY, WAF_AI, every_gap, known_list, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known

# The content filter that turns filtering off, as a deployment's raiPolicyName or a policy's base.
NIL = "Microsoft.Nil"
# The harm categories filtered at a severity threshold, on prompts and on completions.
HARM_CATEGORIES = ("Hate", "Sexual", "Violence", "Selfharm")
SOURCES = ("Prompt", "Completion")
# Prompt shields: user prompt attacks (jailbreak) and document (indirect) attacks.
JAILBREAK = "Jailbreak"
INDIRECT_ATTACK = "Indirect Attack"
# The threshold that blocks only high-severity content (Low blocks low and above; Medium, the
# default, blocks medium and above).
HIGH_THRESHOLD = "High"
# Modes that return content before the filter has judged it: Asynchronous_filter from api-version
# 2025-06-01, Deferred (the same mode) before it.
STREAMING_MODES = ("Asynchronous_filter", "Deferred")


@rule(
    id="AZAI-114",
    slug="content-filter",
    title="Model deployment has content filtering off, or its content filter is weakened",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.MODEL_DEPLOYMENT, T.RAI_POLICY),
    reads=(),
    principle=Principle(
        "Filter the prompts and completions of generative models for harmful content and prompt attacks, "
        "and block what the filter finds.",
        WAF_AI + "responsible-ai",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_cognitive_deployment: rai_policy_name = a custom azurerm_cognitive_account_rai_policy (or "
            '"Microsoft.DefaultV2"), never "Microsoft.Nil"; in the policy, every content_filter with '
            'filter_enabled = true, block_enabled = true, severity_threshold = "Medium" or "Low", and mode '
            '"Default" or "Blocking".'
        ),
        bicep="deployment properties: { raiPolicyName: policy.name }; raiPolicies properties: { basePolicyName: "
        "'Microsoft.DefaultV2', mode: 'Default', contentFilters: [ { name, source, enabled: true, blocking: true, "
        "severityThreshold: 'Medium' } ] }",
        cli="az cognitiveservices account deployment create ... --rai-policy-name POLICY; "
        "az rest --method put --url .../accounts/ACCOUNT/raiPolicies/POLICY?api-version=2025-06-01 "
        "--body with the policy JSON",
        terraform_code="""\
            resource "azurerm_cognitive_account_rai_policy" "strict" {
              name                 = "strict"
              cognitive_account_id = azurerm_cognitive_account.openai.id
              base_policy_name     = "Microsoft.DefaultV2"
              mode                 = "Default"

              content_filter {
                name               = "Hate"
                filter_enabled     = true
                block_enabled      = true
                severity_threshold = "Medium"
                source             = "Prompt"
              }
              content_filter {
                name               = "Hate"
                filter_enabled     = true
                block_enabled      = true
                severity_threshold = "Medium"
                source             = "Completion"
              }
              # ... Sexual, Violence and Selfharm the same way
              content_filter {
                name               = "Jailbreak"
                filter_enabled     = true
                block_enabled      = true
                severity_threshold = "High"
                source             = "Prompt"
              }
            }

            resource "azurerm_cognitive_deployment" "chat" {
              # ...
              rai_policy_name = azurerm_cognitive_account_rai_policy.strict.name
            }
        """,
        bicep_code="""\
            resource strict 'Microsoft.CognitiveServices/accounts/raiPolicies@2025-06-01' = {
              parent: openai
              name: 'strict'
              properties: {
                basePolicyName: 'Microsoft.DefaultV2'
                mode: 'Default'
                contentFilters: [
                  { name: 'Hate', source: 'Prompt', enabled: true, blocking: true, severityThreshold: 'Medium' }
                  { name: 'Hate', source: 'Completion', enabled: true, blocking: true, severityThreshold: 'Medium' }
                  // ... Sexual, Violence and Selfharm the same way
                  { name: 'Jailbreak', source: 'Prompt', enabled: true, blocking: true }
                  { name: 'Indirect Attack', source: 'Prompt', enabled: true, blocking: true }
                ]
              }
            }

            resource chat 'Microsoft.CognitiveServices/accounts/deployments@2025-06-01' = {
              parent: openai
              name: 'chat'
              // ...
              properties: {
                // ...
                raiPolicyName: strict.name
              }
            }
        """,
        cli_code="""\
            az rest --method put \\
              --url "https://management.azure.com/ACCOUNT_ID/raiPolicies/strict?api-version=2025-06-01" \\
              --body @strict-policy.json
            az cognitiveservices account deployment create --name ACCOUNT --resource-group RG \\
              --deployment-name chat --model-name MODEL --model-version VERSION --model-format OpenAI \\
              --sku-name GlobalStandard --sku-capacity 10 --rai-policy-name strict
        """,
        guide="https://learn.microsoft.com/azure/ai-foundry/openai/how-to/content-filters",
    ),
    help_uri=rule_page("AZAI-114"),
    peers=(
        PeerRule(
            AZURE_POLICY,
            "5207647b-3e83-4e28-b836-c382cb5e2a2e",
            "[Preview]: Guardrail for Cognitive Services Deployments (initiative)",
            "Audit-only, and its policies judge deployed deployments' resolved filters (mode "
            "Microsoft.CognitiveServices.Data; Azure/azure-policy built-in-policies/policySetDefinitions/Cognitive "
            "Services/AllowDeploymentControl_Audit.json@f4a50bac); azai reads the policy a deployment names, and the "
            "account's custom filters, before deploy from the IaC. Its policies' notes say where they decide "
            "differently.",
        ),
        PeerRule(
            AZURE_POLICY,
            "930f48f9-f07e-427c-9494-52603581c6a9",
            "[Preview]: Cognitive Services Deployments should only use allowed control",
            "Both require the harm categories enabled and blocking on prompts and completions, but the policy allows "
            "Medium and High thresholds by default (Azure/azure-policy built-in-policies/policyDefinitions/Cognitive "
            "Services/AllowDeploymentMultiSeverityControl_Audit.json@f4a50bac), where azai reports High at medium "
            "severity, since it lets medium-severity content through. The policy judges deployed deployments only.",
        ),
        PeerRule(
            AZURE_POLICY,
            "f3a9c2e0-7b4d-4d8f-9c3a-2e1f6b9a8d4e",
            "[Preview]: Cognitive Services Deployments should only use allowed prompt content filtering",
            "The initiative assigns it for Jailbreak, Indirect Attack, Indirect Attack Spotlighting and Profanity on "
            "prompts (Azure/azure-policy built-in-policies/policyDefinitions/Cognitive "
            "Services/AllowDeploymentPromptControl_Audit.json@f4a50bac); azai checks Jailbreak (high) and Indirect "
            "Attack (medium), not Spotlighting or Profanity. The policy judges deployed deployments only.",
        ),
        PeerRule(
            AZURE_POLICY,
            "af253d37-136a-42f8-a1fc-30010c083d41",
            "[Preview]: Cognitive Services Deployments should only use allowed completion content filtering",
            "Not covered: its filters are Profanity and Protected Material Code and Text on completions "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Cognitive "
            "Services/AllowDeploymentCompletionControl_Audit.json@f4a50bac), none of which azai checks; the harm "
            "categories on completions are policy 930f48f9's.",
        ),
        PeerRule(
            AZURE_POLICY,
            "c1ad46c6-37f8-4af0-9c71-c208375c87dd",
            "[Preview]: Cognitive Services Deployments Should Only Use Allowed Control Mode",
            "The policy passes only the modes its parameter lists, by default Default and Asynchronous_filter "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Cognitive "
            "Services/AllowControlModeForDeployment_Audit.json@f4a50bac): it passes Asynchronous_filter, which azai "
            "reports at medium, and flags Blocking, which azai passes. It judges deployed deployments only.",
        ),
        PeerRule(
            AI_LZ_CHECKLIST,
            "AI.52",
            "Use Azure AI Content Safety to define a baseline content filter for your approved AI models "
            "(570e9d31-44ea-409e-a5a9-83bee922204d)",
            "A checklist item without a query (Azure/review-checklists checklists/ai_lz_checklist.en.json@56cc3adc): "
            "azai checks what it asks of every model deployment and custom filter, harm categories enabled, blocking "
            "and at Low or Medium.",
        ),
        PeerRule(
            AI_LZ_CHECKLIST,
            "AI.93",
            "Implement jailbreak risk detection to safeguard your language model deployments against prompt "
            "injection attacks (9de0d5d7-31d4-41e3-911c-817bfafbc416)",
            "The checklist's graph query marks every Content Safety account compliant and judges no deployment "
            "(Azure/review-checklists checklists/ai_lz_checklist.en.json@56cc3adc); azai fails a custom filter whose "
            "Jailbreak shield is off or only annotates, and a deployment without filtering.",
        ),
    ),
)
def content_filter(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A model deployment with content filtering off, or a custom content filter (an account's
    `raiPolicies`) that lets harmful content or prompt attacks through.

    ## What fails

    Model deployments (`Microsoft.CognitiveServices/accounts/deployments`):

    - **High:** `properties.raiPolicyName` is `Microsoft.Nil`: no content filtering at all.
    - **Low:** `properties.raiPolicyName` is absent (or empty): the deployment gets the platform's
      default filter, which the IaC does not pin.

    Custom content filters (`Microsoft.CognitiveServices/accounts/raiPolicies`), one finding per
    kind of weakness, naming the entries and the scanned deployments on the same account that use
    the filter:

    - **High:** a harm category (`Hate`, `Sexual`, `Violence`, `Selfharm`) on prompts or
      completions is disabled (`enabled: false`) or only annotates (`blocking: false`);
    - **High:** `Jailbreak` (prompt shield for user prompt attacks) is disabled or only annotates;
    - **High:** `properties.basePolicyName` is `Microsoft.Nil` and a harm category, on prompts or
      completions, or `Jailbreak` is not listed, so it inherits no filtering;
    - **Medium:** a harm category's threshold (`severityThreshold`, `allowedContentLevel` before
      api-version 2024-10-01) is `High`: medium-severity content gets through;
    - **Medium:** `Indirect Attack` (prompt shield for document attacks) is disabled or only
      annotates;
    - **Medium:** `properties.mode` is `Asynchronous_filter` (`Deferred` before api-version
      2025-06-01): completions stream to the caller before the filter has judged them.

    Filter names compare case-insensitively and without spaces, hyphens or underscores
    (`indirect_attack` is `Indirect Attack`).

    ## What passes

    Deployments that name `Microsoft.Default`, `Microsoft.DefaultV2` or a custom filter (the
    custom filter is judged on its own), and custom filters whose listed harm categories are
    enabled, blocking and at a `Low` or `Medium` threshold, whose prompt shields are enabled and
    blocking, in mode `Default` or `Blocking`. A category a custom filter does not list inherits
    its `basePolicyName` (`Microsoft.Default` or `Microsoft.DefaultV2`, filtering at `Medium`), so
    it passes. Filters named `Microsoft.*` are Microsoft's own (a live account lists them): the
    deployments that use them are judged instead. A live scan reads an account's custom filters
    only when one of its deployments names one: a filter no deployment uses filters nothing, and
    the read would cost a request for every account.

    ## Undetermined when

    `raiPolicyName`, `mode` or the list of filters is not known before deploy; a deciding field
    of one filter is, and that filter could add a kind of weakness no known filter already has;
    `basePolicyName` is, and the filter does not list every category; or the base is
    `Microsoft.Nil` and filters whose name or source is unknown could list every missing
    category. The other filters are still checked and their failures reported.

    ## Why

    Azure applies a default safety policy to every Azure OpenAI model deployment (except Whisper):
    hate, sexual, violence and self-harm filtered at `Medium` on prompts and completions, and the
    prompt shield for user prompt attacks on prompts
    (https://learn.microsoft.com/azure/ai-foundry/openai/concepts/default-safety-policies). A
    deployment without `raiPolicyName` is therefore filtered, which is why azai reports it only at
    low severity, never higher: the IaC does not say which filter applies, so a change of the
    platform's default goes unreviewed. `Microsoft.Nil` turns filtering off (turning filters
    partly or fully off needs Microsoft's approval,
    https://learn.microsoft.com/azure/ai-foundry/openai/how-to/content-filters): the model then
    answers anything asked of it, and prompt attacks reach it unchecked. A filter in annotate
    mode (`blocking: false`) reports content but does not filter it
    (https://learn.microsoft.com/azure/ai-services/openai/concepts/content-filter-annotations), so
    it lets the same content through while a filter still shows as attached; the `High` threshold
    blocks only the most severe content. With the asynchronous filter, generated tokens are
    returned before their filter results are available, so policy-violating content may be shown
    before the signal arrives
    (https://learn.microsoft.com/azure/foundry/openai/concepts/content-streaming); `Deferred` is
    its name before api-version 2025-06-01
    (https://learn.microsoft.com/dotnet/api/azure.resourcemanager.cognitiveservices.models.raipolicyproperties.mode).
    Indirect attacks matter where the model reads third-party content (retrieval, tools), hence
    medium severity.
    """
    if resource.type_key == T.MODEL_DEPLOYMENT.lower():
        yield from _deployment(resource)
    elif not _microsoft_owned(resource):
        yield from _policy(resource, ctx)


def _deployment(deployment: Resource) -> Iterator[Violation]:
    policy = known(deployment.get("properties.raiPolicyName"))
    name = _label(deployment, "Model deployment")
    if policy is None or (isinstance(policy, str) and not policy.strip()):
        yield Violation(
            f"{name} names no content filter (properties.raiPolicyName): it relies on the platform's default, "
            "which the IaC does not pin",
            "properties.raiPolicyName",
            policy,
            "Microsoft.DefaultV2 or a custom content filter",
            Severity.LOW,
        )
    elif same_text(policy, NIL):
        yield Violation(
            f"{name} has content filtering off (raiPolicyName {NIL})",
            "properties.raiPolicyName",
            policy,
            "Microsoft.DefaultV2 or a custom content filter",
            Severity.HIGH,
        )


def _policy(policy: Resource, ctx: CheckContext) -> Iterator[Violation]:
    label = _label(policy, "Content filter")
    users = _users(policy, ctx)
    filters = known_list(policy.get("properties.contentFilters"), "properties.contentFilters") or []
    entries = [_Entry(index, item) for index, item in enumerate(filters)]
    yield from every_gap(
        _weak_entries(label, users, entries),
        _nil_base(policy, label, users, entries),
        _streaming(policy, label, users),
    )


class _Entry:
    """One listed filter, read lazily: a deciding value unknown before deploy raises only when
    the check that needs it reads it."""

    def __init__(self, index: int, item: Any) -> None:
        self.index = index
        self.item = item if isinstance(item, dict) else {}

    @property
    def path(self) -> str:
        return f"properties.contentFilters.{self.index}"

    def name(self) -> str:
        value = known(self.item.get("name"))
        return _key(value) if isinstance(value, str) else ""

    def source(self) -> str:
        value = known(self.item.get("source"))
        return value.capitalize() if isinstance(value, str) else ""

    def shown(self) -> str:
        """How a finding names the entry; a source not known before deploy is left out (it only
        labels the entry, which is weak whichever it is)."""
        source = self.item.get("source")
        name = known(self.item.get("name"))
        return f"{name} ({source.lower()}s)" if isinstance(source, str) and source else str(name)

    def threshold_field(self) -> str:
        """``severityThreshold``, or ``allowedContentLevel``, the same setting in api-versions
        before 2024-10-01."""
        return "severityThreshold" if "severityThreshold" in self.item else "allowedContentLevel"

    def may_block_only_high(self) -> bool:
        threshold = self.item.get(self.threshold_field())
        return isinstance(threshold, Unknown) or same_text(threshold, HIGH_THRESHOLD)

    def kinds(self) -> set[str]:
        """The kinds of weakness the entry could have, whatever its unknown fields turn out to be:
        those its known fields do not rule out."""
        try:
            kinds_of_name = _weaknesses(self.name())
        except UnknownValueError:
            return {kind for kind, *_ in _KINDS}
        if kinds_of_name is None:
            return set()
        off, annotates, threshold = kinds_of_name
        enabled, blocking = self.item.get("enabled"), self.item.get("blocking")
        kinds = {off} if enabled is False or isinstance(enabled, Unknown) else set()
        if enabled is not False:
            if blocking is False or isinstance(blocking, Unknown):
                kinds.add(annotates)
            if threshold is not None and blocking is not False and self.may_block_only_high():
                kinds.add(threshold)
        return kinds


def _weak_entries(label: str, users: str, entries: list[_Entry]) -> Iterator[Violation]:
    """The harm categories and prompt shields that are off, only annotate, or block too little,
    one finding per kind. Each entry is read on its own, so an unknown one does not hide the
    others' weaknesses: its Unknown is raised after them, and only when it could add a kind
    that no known entry already has."""
    found: dict[str, list[tuple[_Entry, str, Any]]] = {}
    doubtful: list[tuple[_Entry, UnknownValueError]] = []
    for entry in entries:
        try:
            _judge(entry, found)
        except UnknownValueError as exc:
            doubtful.append((entry, exc))
    unknown = next((exc for entry, exc in doubtful if not entry.kinds() <= set(found)), None)
    for kind, verb, severity, expected in _KINDS:
        hits = found.get(kind, [])
        if hits:
            _, path, observed = hits[0]
            shown = ", ".join(entry.shown() for entry, _, _ in hits)
            yield Violation(f"{label} {verb} {shown}{users}", path, observed, expected, severity)
    if unknown is not None:
        raise unknown


# Kinds of weakness of listed filters: what the finding says, its severity and what would pass.
_KINDS = (
    ("harm-off", "turns off", Severity.HIGH, "enabled true"),
    ("harm-annotate", "only annotates (blocking false)", Severity.HIGH, "blocking true"),
    ("jailbreak", "does not block user prompt attacks:", Severity.HIGH, "enabled and blocking true"),
    ("threshold", "blocks only high-severity content (threshold High) for", Severity.MEDIUM, "Medium or Low"),
    ("indirect", "does not block document (indirect) attacks:", Severity.MEDIUM, "enabled and blocking true"),
)


def _judge(entry: _Entry, found: dict[str, list[tuple[_Entry, str, Any]]]) -> None:
    """Record the entry under the kind of weakness it has, if any: a harm category that is off
    or only annotates, or whose threshold is High; a prompt shield that is off or only annotates."""
    kinds = _weaknesses(entry.name())
    if kinds is None:
        return
    off, annotates, threshold_kind = kinds
    enabled = known(entry.item.get("enabled"))
    if enabled is False:  # off: whether it would block does not matter
        found.setdefault(off, []).append((entry, f"{entry.path}.enabled", enabled))
        return
    blocking = known(entry.item.get("blocking"))
    if blocking is False:
        found.setdefault(annotates, []).append((entry, f"{entry.path}.blocking", blocking))
    elif threshold_kind is not None:
        field = entry.threshold_field()
        threshold = known(entry.item.get(field))
        if same_text(threshold, HIGH_THRESHOLD):
            found.setdefault(threshold_kind, []).append((entry, f"{entry.path}.{field}", threshold))


def _weaknesses(name: str) -> tuple[str, str, str | None] | None:
    """The kinds of weakness a filter of this name can have: when off, when only annotating, and
    when its threshold is High (harm categories only); None for a filter the rule does not judge."""
    if name in _HARM_KEYS:
        return "harm-off", "harm-annotate", "threshold"
    if name in (_JAILBREAK_KEY, _INDIRECT_KEY):
        kind = "jailbreak" if name == _JAILBREAK_KEY else "indirect"
        return kind, kind, None
    return None


def _nil_base(policy: Resource, label: str, users: str, entries: list[_Entry]) -> Iterator[Violation]:
    """With base Microsoft.Nil, what the filter does not list is not filtered at all. A filter that
    lists everything passes whatever its base; an entry whose name or source is not known before
    deploy may list one missing category, so it matters only when fewer are missing than such
    entries could cover."""
    listed: set[tuple[str, str]] = set()
    unsure: list[UnknownValueError] = []
    for entry in entries:
        try:
            listed.add((entry.name(), entry.source()))
        except UnknownValueError as exc:
            unsure.append(exc)
    missing = [f"{c} ({s.lower()}s)" for c in HARM_CATEGORIES for s in SOURCES if (_key(c), s) not in listed]
    if not any(name == _JAILBREAK_KEY for name, _ in listed):
        missing.append(f"{JAILBREAK} (prompts)")
    if not missing:
        return
    base = known(policy.get("properties.basePolicyName"))
    if not same_text(base, NIL):
        return
    if len(missing) <= len(unsure):
        raise unsure[0]
    maybe = f" (or all but {len(unsure)} of them: some entries are not known before deploy)" if unsure else ""
    yield Violation(
        f"{label} is based on {NIL}, so what it does not list is not filtered: {', '.join(missing)}{maybe}{users}",
        "properties.basePolicyName",
        base,
        "Microsoft.DefaultV2, or every category listed",
    )


def _streaming(policy: Resource, label: str, users: str) -> Iterator[Violation]:
    mode = known(policy.get("properties.mode"))
    if same_text(mode, *STREAMING_MODES):
        yield Violation(
            f"{label} filters asynchronously (mode {mode}): completions reach the caller before the filter "
            f"judges them{users}",
            "properties.mode",
            mode,
            "Default or Blocking",
            Severity.MEDIUM,
        )


def _users(policy: Resource, ctx: CheckContext) -> str:
    """Which scanned deployments on the policy's account name it: they reference it by name."""
    account = ctx.inventory.parent(policy)
    if account is None:
        return ""
    short = _short(policy).lower()
    users = [
        _short(d)
        for d in ctx.inventory.children(account, T.MODEL_DEPLOYMENT)
        if isinstance(d.get("properties.raiPolicyName"), str) and d.get("properties.raiPolicyName").lower() == short
    ]
    if not users:
        return "; no scanned deployment uses it"
    return f"; used by deployment {', '.join(repr(u) for u in sorted(users))}"


def _microsoft_owned(policy: Resource) -> bool:
    return T.builtin_content_filter(_short(policy))


def _label(resource: Resource, kind: str) -> str:
    account, _, short = resource.name.rpartition("/")
    return f"{kind} '{short}'" + (f" of account '{account}'" if account else "")


def _short(resource: Resource) -> str:
    return resource.name.rsplit("/", 1)[-1]


_SEPARATORS = re.compile(r"[\s_\-]")


def _key(name: str) -> str:
    """A filter name as the service matches it: case and separators aside."""
    return _SEPARATORS.sub("", name).lower()


_HARM_KEYS = frozenset(_key(c) for c in HARM_CATEGORIES)
_JAILBREAK_KEY = _key(JAILBREAK)
_INDIRECT_KEY = _key(INDIRECT_ATTACK)
