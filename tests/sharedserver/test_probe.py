import psycopg
from tests.sharedserver.conftest import SharedServer

def test_probe(pg15: SharedServer, pg18_tls: SharedServer) -> None:
    for s in (pg15, pg18_tls):
        with psycopg.connect(s.url) as c:
            print(c.execute("select version(), current_user, (select ssl from pg_stat_ssl where pid=pg_backend_pid())").fetchone())
    print(pg18_tls.url)
    try:
        psycopg.connect(pg18_tls.url.replace("verify-full","disable"))
    except psycopg.OperationalError as e:
        print("nossl", e)
