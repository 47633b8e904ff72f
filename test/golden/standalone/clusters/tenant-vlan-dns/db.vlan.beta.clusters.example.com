; oooi-digest: 5c68d12e18106e11e9ee76037a742def47c33f1691e15165c8a18733af47fae9
$ORIGIN beta.clusters.example.com.
$TTL 30
@ IN SOA ns.beta.clusters.example.com. hostmaster.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.beta.clusters.example.com.
ns IN A 127.0.8.3
api IN A 127.0.8.4
api-int IN A 127.0.8.4
ignition IN A 127.0.8.4
konnectivity IN A 127.0.8.4
oauth IN A 127.0.8.4
