; oooi-digest: 1192b40632ca0cde8885682e08a3ce1e59600734a9f4528da32ae31e7550e445
$ORIGIN api.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.api.alpha.clusters.example.com. hostmaster.api.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.alpha.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
