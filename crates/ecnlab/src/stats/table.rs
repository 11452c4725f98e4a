//! Column-oriented tables: how results leave the core (the Python front turns each into an
//! Arrow table / polars DataFrame without per-row work).

/// Nullable typed column data.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Str(Vec<String>),
    Bool(Vec<bool>),
}

impl ColumnData {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::I64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Str(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub data: ColumnData,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn new(name: &str) -> Self {
        Table {
            name: name.to_string(),
            columns: Vec::new(),
        }
    }

    pub fn push(&mut self, name: &str, data: ColumnData) {
        debug_assert!(self.columns.is_empty() || self.columns[0].data.len() == data.len());
        self.columns.push(Column {
            name: name.to_string(),
            data,
        });
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.data.len())
    }

    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.data)
    }

    /// A numeric cell as f64 (tests and quick checks).
    pub fn f64(&self, name: &str, row: usize) -> Option<f64> {
        match self.column(name)? {
            ColumnData::I64(v) => v[row].map(|x| x as f64),
            ColumnData::F64(v) => v[row],
            ColumnData::Bool(v) => Some(v[row] as u8 as f64),
            ColumnData::Str(_) => None,
        }
    }

    pub fn str(&self, name: &str, row: usize) -> Option<&str> {
        match self.column(name)? {
            ColumnData::Str(v) => Some(&v[row]),
            _ => None,
        }
    }

    /// Comma-separated text (debugging, small tables).
    pub fn to_csv(&self) -> String {
        let mut s = self
            .columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(",");
        s.push('\n');
        for r in 0..self.rows() {
            let cells: Vec<String> = self
                .columns
                .iter()
                .map(|c| match &c.data {
                    ColumnData::I64(v) => v[r].map_or(String::new(), |x| x.to_string()),
                    ColumnData::F64(v) => v[r].map_or(String::new(), |x| x.to_string()),
                    ColumnData::Str(v) => v[r].clone(),
                    ColumnData::Bool(v) => v[r].to_string(),
                })
                .collect();
            s.push_str(&cells.join(","));
            s.push('\n');
        }
        s
    }
}
