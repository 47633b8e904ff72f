; oooi-digest: 9d054d146aa204df526f0549cbfb41f84aec340dbb5b1ee9cf53c03cdccfc484
$ORIGIN alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.alpha.clusters.example.com. hostmaster.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.alpha.clusters.example.com.
ns IN A 127.0.8.3
*.apps IN A 127.0.8.200
api IN A 127.0.8.4
api-int IN A 127.0.8.4
ignition IN A 127.0.8.4
konnectivity IN A 127.0.8.4
oauth IN A 127.0.8.4
