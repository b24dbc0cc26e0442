"""Self-identifying secret formats from the public catalogues, beyond the common ones.

Written for this project (no catalogue code is copied) after reading the rule sets of
gitleaks v8.30.0-27 (commit b58d3f10, ``cmd/generate/config/rules``), trufflehog v3.97.0-9
(commit 3ab759fe, ``pkg/detectors``) and Yelp detect-secrets v1.5.0-50 (commit 5e141933,
``detect_secrets/plugins``): every format there with a fixed prefix or structure that is not in
:mod:`agents_memory.admission.secret_formats` already. Formats a catalogue finds only next to a
keyword (a bare 32-hex string near "adzuna") are left to the ``name = value`` rules.

Each entry: ``(kind, pattern, triggers, random)``. Patterns use the shorthands of
``secret_formats`` (``<w>`` base64url, ``<a>`` alphanumeric, ``<h>`` lower hex); triggers are
``|``-separated literals the text must contain (``\0name``: enabled by a shape of the screen's
own); ``random`` asks that the match look
random (two character classes and a run of 10 alphanumerics), for prefixes that ordinary words
can start with.
"""

from __future__ import annotations

from typing import Final

_UUID: Final = "<h>{8}-<h>{4}-<h>{4}-<h>{4}-<h>{12}"

FORMATS: Final[tuple[tuple[str, str, str, bool], ...]] = (
    # observability
    ("grafana_api_key", r"eyJrIjoi<a>{70,400}+={0,3}", "eyJ", False),
    ("grafana_cloud_token", r"glc_[A-Za-z0-9+/]{32,400}+={0,3}", "glc_", False),
    ("grafana_service_account_token", r"glsa_[A-Za-z0-9_]{32,80}+", "glsa_", False),
    ("sentry_org_token", r"sntrys_eyJ[A-Za-z0-9+/=_-]{30,}+", "sntrys_", False),
    ("sentry_user_token", r"sntryu_<h>{64}", "sntryu_", False),
    ("dynatrace_token", r"dt0[a-z][0-9]{2}\.<a>{24}\.<a>{64}", "dt0c01.|dt0s01.|dt0a01.", False),
    (
        "newrelic_key",
        r"NR(?:AK|BR|II|IQ|JS|RA|AA)-[A-Za-z0-9_-]{19,40}+",
        "NRBR-|NRII-|NRIQ-|NRJS-|NRRA-|NRAA-",
        False,
    ),
    ("nightfall_api_key", r"NF-<a>{32}", "NF-", True),
    ("fullstory_api_key", r"na1\.[A-Za-z0-9+/]{80,}+={0,2}", "na1.", True),
    # source hosting, CI, registries
    ("sourcegraph_token", r"sgp_[A-Za-z0-9_]{40,}+", "sgp_", False),
    ("sourcegraph_cody_token", r"slk_<h>{64}", "slk_", False),
    ("buildkite_token", r"bkua_[a-z0-9]{40}", "bkua_", False),
    ("circleci_token", r"CCIPAT_<w>{20,}+", "CCIPAT_", False),
    ("dockerhub_token", r"dckr_(?:pat|oat)_<w>{24,}+", "dckr_pat_|dckr_oat_", False),
    ("rubygems_api_key", r"rubygems_[a-z0-9]{48}", "rubygems_", False),
    ("clojars_token", r"CLOJARS_[A-Za-z0-9]{60}", "CLOJARS_", False),
    ("artifactory_api_key", r"AKCp<a>{69}", "AK", False),
    ("artifactory_reference_token", r"cmVmdGtu<a>{56}", "cmV", False),
    ("atlassian_datacenter_token", r"BBDC-[A-Za-z0-9+/@_-]{40,50}+", "BBDC-", False),
    ("octopus_deploy_api_key", r"API-[A-Z0-9]{26,32}", "API-", True),
    ("harness_token", r"(?:pat|sat)\.<w>{22}\.<a>{24}\.<a>{20}", "pat.|sat.", False),
    ("sonar_token", r"sq(?:co|[apu])_<a>{40,}+", "sqco_|sqp_|squ_|sqa_", False),
    ("endorlabs_api_key", r"endr\+<a>{16}", "endr+", False),
    ("spectralops_token", r"spu-<h>{32}", "spu-", False),
    (
        "trufflehog_enterprise_key",
        r"thog-(?:key|secret)-<h>{16,32}",
        "thog-key-|thog-secret-",
        False,
    ),
    ("gitlab_session_cookie", r"_gitlab_session=<a>{32}", "_gitlab_session=", False),
    ("settlemint_token", r"sm_(?:aat|pat|sat)_<a>{16}", "sm_aat_|sm_pat_|sm_sat_", False),
    ("pganalyze_api_key", r"pga[rw]_<a>{20,40}+", "pgar_|pgaw_", True),
    ("infracost_api_key", r"ico-<a>{32}", "ico-", True),
    # cloud and infrastructure
    ("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}+", "pscale_", False),
    (
        "flyio_token",
        r"fo1_<w>{40,}+|fm[12][ar]?_[A-Za-z0-9+/=]{40,}+",
        "fo1_|fm1_|fm2_|fm1r_|fm2r_|fm1a_|fm2a_",
        False,
    ),
    ("openshift_token", r"sha256~<w>{43}", "sha256~", False),
    (
        "cloudflare_api_token",
        r"cf(?:ut|at|k)_<a>{40,}+|v1\.0-[a-z0-9]{24}-[a-z0-9]{146}",
        "cfut_|cfat_|cfk_|v1.0-",
        False,
    ),
    ("vault_service_token", r"s\.<a>{24}", "\0vault", True),
    ("vault_batch_token", r"b\.AAAAAQ<w>{80,}+", "b.AAAAA", False),
    (
        "onepassword_secret_key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}",
        "A3-",
        False,
    ),
    ("aws_bedrock_api_key", r"ABSK[A-Za-z0-9+/]{100,}+={0,2}", "ABSK", False),
    (
        "aws_bedrock_api_key",
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&_-]*+",
        "bedrock-api-key-",
        False,
    ),
    ("aws_appsync_key", r"da2-[a-z0-9]{26}", "da2-", False),
    ("alibaba_access_key_id", r"LTAI<a>{12,24}", "LTA", True),
    ("doppler_token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.<a>{40,}+", "dp.", False),
    ("pulumi_token", r"pul-[a-z0-9]{40}", "pul-", True),
    ("scalingo_token", r"tk-us-<w>{48}", "tk-us-", False),
    ("tailscale_key", r"tskey-[a-z]+-<w>{16,}+", "tskey-", False),
    ("salad_cloud_api_key", r"salad_cloud_(?:org|user)_<a>{40,}+", "salad_cloud_", False),
    ("pinecone_api_key", r"pcsk_<w>{40,}+", "pcsk_", False),
    ("supabase_key", r"sbp_[a-z0-9]{40}", "sbp_", True),
    ("clickhouse_secret", r"4b1d<a>{38}", "4b1", True),
    # SaaS and payments
    (
        "hubspot_token",
        rf"pat-(?:na|eu|ap)[0-9]-{_UUID}",
        "pat-na1-|pat-na2-|pat-eu1-|pat-ap1-",
        False,
    ),
    ("mailchimp_api_key", r"(?<![a-z0-9])<h>{32}-us[0-9]{1,2}", "-us", False),
    ("shippo_token", r"shippo_(?:live|test)_<h>{40}", "shippo_", False),
    ("prefect_token", r"pnu_<a>{36}", "pnu_", False),
    ("readme_api_key", r"rdme_[a-z0-9]{70}", "rdme_", False),
    ("sendgrid_api_key", r"SG\.[A-Za-z0-9_=-][A-Za-z0-9_=.-]{40,80}(?<!\.)", "SG.", True),
    ("sendinblue_api_key", r"x(?:keysib|smtpsib)-[A-Za-z0-9_-]{40,}+", "xkeysib-|xsmtpsib-", False),
    ("easypost_api_key", r"EZ[AT]K<a>{54}", "EZAK|EZTK", False),
    ("frameio_token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-", False),
    ("duffel_token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{40,}+", "duffel_", False),
    (
        "flutterwave_key",
        r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-z0-9]{12,32}(?:-X)?",
        "FLWSECK|FLWPUBK",
        False,
    ),
    ("apify_token", r"apify_api_<w>{36}", "apify_api_", False),
    ("elevenlabs_api_key", r"sk_<h>{48}", "sk_", False),
    ("nvidia_api_key", r"nvapi-<w>{64}", "nvapi-", False),
    ("typeform_token", r"tfp_[A-Za-z0-9_.=-]{40,80}+", "tfp_", False),
    ("rootly_api_key", r"rootly_<h>{64}", "rootly_", False),
    ("airtable_token", r"pat<a>{14}\.<h>{64}", "\0airtable", False),
    ("facebook_access_token", r"EAA[ACM]<w>{20,}+", "EAA", True),
    # app id|app secret: the id is public, only the secret after the bar is replaced
    ("facebook_access_token", r"\|(?<=[0-9]{15}\|)(?P<v><w>{27})", "\0pipe", True),
    ("intra42_client_secret", r"[su]-s4t2(?:ud|af)-<h>{64}", "-s4t2ud-|-s4t2af-", False),
    ("maxmind_license_key", r"<a>{6}_<a>{29}_mmk", "_mmk", False),
    ("adafruit_io_key", r"aio_<a>{28}", "aio_", True),
    ("atlassian_api_token", r"AT[AC]TT[A-Za-z0-9_=-]{24,}+", "ATA|ATC", True),
    ("bannerbear_key", r"bb_(?:pr|ma)_<h>{30}", "bb_pr_|bb_ma_", False),
    ("closecrm_api_key", r"api_[A-Za-z0-9.]{45}", "api_", True),
    (
        "coinbase_api_key_name",
        rf"organizations\\?/{_UUID}\\?/apiKeys\\?/{_UUID}",
        "apiKeys/|apiKeys\\/",
        False,
    ),
    ("contentful_token", r"CFPAT-<w>{43}", "CFPAT-", False),
    ("dfuse_api_key", r"web_[a-z0-9]{32}", "web_", True),
    ("figma_token", r"fig[dpu]_<w>{36,}+={0,2}", "figp_|figu_", False),
    ("finage_api_key", r"API_KEY[A-Z0-9]{28,32}", "API_KEY", True),
    ("fleetbase_key", r"flb_live_<a>{20}", "flb_live_", False),
    ("flexport_key", r"shltm_<w>{40}", "shltm_", False),
    ("gocardless_token", r"live_<w>{40}", "live_", True),
    ("klaviyo_key", r"pk_[A-Za-z0-9_]{34,48}", "pk_", True),
    ("locationiq_token", r"pk\.<w>{32}", "pk.", True),
    ("pagarme_key", r"ak_(?:live|test)_<a>{30}", "ak_live_|ak_test_", False),
    ("paystack_key", r"sk_[a-z]{1,12}_<a>{40}", "sk_", True),
    ("posthog_key", r"ph[cx]_<w>{40,}+", "phc_|phx_", True),
    ("postman_api_key", r"PMAK-[A-Za-z0-9-]{40,70}+", "PMAK-", False),
    ("pubnub_key", r"(?:pub|sub)-c-[a-z0-9-]{36}", "pub-c-|sub-c-", False),
    ("ramp_key", r"ramp_(?:id|sec)_<a>{40,}+", "ramp_id_|ramp_sec_", False),
    ("razorpay_key", r"rzp_(?:live|test)_<a>{14}", "rzp_live_|rzp_test_", False),
    ("robinhood_crypto_key", rf"rh-api-{_UUID}", "rh-api-", False),
    ("salesforce_token", r"(?:3MVG9|5Aep861)[A-Za-z0-9._]{40,}+", "3MV|5Aep861", False),
    ("stripe_client_secret", r"pi_<a>{24}_secret_<a>{25}", "_secret_", False),
    ("ubidots_token", r"BBFF-<a>{30}", "BBFF-", False),
    ("voiceflow_key", r"VF\.(?:DM|WS)\.<h>{24}\.<a>{16}", "VF.", False),
    ("zoho_token", r"1000\.<h>{32}\.<h>{32}", "1000.", False),
    ("stripe_publishable_key", r"pk_(?:live|test)_<a>{20,}+", "pk_live_|pk_test_", False),
    (
        "jwt",
        r"ey<a>{17,}+\.ey[A-Za-z0-9/_-]{17,}+\.(?:[A-Za-z0-9/_-]{10,}+={0,2})?",
        ".ey",
        False,
    ),
    ("freemius_secret_key", r"sk_[A-Za-z0-9#&@*$!%^+=-]{29}(?![\w#&@*$!%^+=-])", "sk_", True),
)
