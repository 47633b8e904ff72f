; oooi-digest: 4badf4dc7ae7615a7f0f0a8d704bf315afdc44192a599b5c238a8d59ba79b7f8
$ORIGIN konnectivity.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.beta.clusters.example.com. hostmaster.konnectivity.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.beta.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
