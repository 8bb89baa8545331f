echo "$#"
