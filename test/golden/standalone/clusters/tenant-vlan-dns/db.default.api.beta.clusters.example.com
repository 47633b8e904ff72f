; oooi-digest: 8881753d628c12ee7409873d74cca288d68dfbd8a16780f345107d5ccd670f4c
$ORIGIN api.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.api.beta.clusters.example.com. hostmaster.api.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.beta.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
