; oooi-digest: 1c3daa8ca6ffc391d6725ee25b755e4a8ebbcec7c33e1733a7061838b2c23ebe
$ORIGIN api.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.api.beta.clusters.example.com. hostmaster.api.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.api.beta.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
