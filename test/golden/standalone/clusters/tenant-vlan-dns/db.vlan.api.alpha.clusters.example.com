; oooi-digest: ee7d4e041afdaf48d93191d5f3d12efc8c9574bed007df864b46e81fba2414ab
$ORIGIN api.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.api.alpha.clusters.example.com. hostmaster.api.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.alpha.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
